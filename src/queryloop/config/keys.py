"""The table of settings keys: every top-level key queryloop implements, declared once.

Each `SettingKey` says which JSON key(s) it reads, which `Settings` field(s) it fills, what an
untrusted project may do with it and how it merges (`config.merge`). A new setting is one
entry here and its field on `Settings`; `tests/config/test_settings_table.py` checks that the
table and `Settings` agree. The order is the order a file's problems are reported in. Claude
Code's keys queryloop does not implement are classified in `config.claude_settings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..session.store import SessionError
from .discovery import Layout
from .hook_policy import HttpHookPolicyMerger
from .hook_settings import HooksRule
from .mcp_approval import McpApprovalMerger
from .mcp_policy import McpPolicyMerger
from .merge import Merge, SettingKey, Untrusted, Value, table_keys
from .permission_settings import PermissionsRule
from .plugins import EnabledPluginsMerger
from .sandbox import SandboxMerger
from .settings_file import SettingsFile, SettingsScope, Severity
from .status_line import describe_status_line, parse_status_line

if TYPE_CHECKING:
    # Loaded where used: the compact package brings the tools with it, and reading the
    # settings (`queryloop sessions`, for the session store) must stay light.
    from ..compact.policy import CompactionName

# ---- parsers: (key, raw JSON value) -> value; ValueError with the message when wrong -------


def _string(key: str, raw: object) -> str:
    if not isinstance(raw, str):
        raise ValueError(f"'{key}' must be a string")
    return raw


def _boolean(key: str, raw: object) -> bool:
    if not isinstance(raw, bool):
        raise ValueError(f"'{key}' must be true or false")
    return raw


def _paths(key: str, raw: object) -> list[Path]:
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        raise ValueError(f"'{key}' must be a list of strings")
    return [Path(v).expanduser() for v in raw]


def _env(key: str, raw: object) -> dict[str, str]:
    if not isinstance(raw, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise ValueError(f"'{key}' must be an object of string values")
    return dict(raw)


def _tool_search(key: str, raw: object) -> str | int:
    """Only checked here (`queryloop.context.tool_search` reads it when MCP tools are
    deferred); loaded on use, like the cache TTL's, so reading settings stays cheap."""
    from ..context.tool_search import parse_tool_search

    try:
        if not isinstance(raw, str | int):
            raise ConfigError(f"{raw!r} is not a string or a token count")
        parse_tool_search(raw)
    except ConfigError as exc:
        raise ValueError(f"'{key}': {exc}") from exc
    return raw


def _compaction(key: str, raw: object) -> CompactionName:
    """A policy name; anything else is an error (a user who asked for economy must not pay
    for the default without knowing)."""
    from ..compact.policy import COMPACTION_NAMES

    for name in COMPACTION_NAMES:
        if raw == name:
            return name
    names = " or ".join(f'"{n}"' for n in COMPACTION_NAMES)
    raise ValueError(f"'{key}' must be {names}, not {raw!r}")


def _cache_ttl(key: str, raw: object) -> str:
    """ "5m", "1h" or "auto"; anything else is an error (a user who asked for hour-long
    entries must not pay for expired ones without knowing)."""
    from ..context.cache_ttl import parse_cache_ttl

    try:
        return parse_cache_ttl(raw)
    except ConfigError as exc:
        raise ValueError(f"'{key}': {exc}") from exc


def _session_store(key: str, raw: object) -> str:
    """A store spec of a form queryloop knows (`queryloop.session.stores`); nothing is
    opened while settings are read."""
    from ..session.stores import check_store_spec

    try:
        return check_store_spec(_string(key, raw))
    except SessionError as exc:
        raise ValueError(f"'{key}': {exc}") from exc


def _names(env: Mapping[str, str]) -> str | None:
    return ", ".join(sorted(env)) or None


def _users_own_file(file: SettingsFile) -> bool:
    """The user's queryloop settings file: a project never trusts itself."""
    return file.scope is SettingsScope.USER and file.layout is Layout.QUERYLOOP


APPLIES, NARROWS, IGNORED = Untrusted.APPLIES, Untrusted.NARROWS, Untrusted.IGNORED

SETTINGS_TABLE: tuple[SettingKey, ...] = (
    SettingKey(
        ("permissions", "allowManagedPermissionRulesOnly"),
        (
            "rules",
            "untrusted_rules",
            "default_mode",
            "additional_directories",
            "disable_bypass_mode",
            "deny_instead_of_prompting",
            "block_writes_outside",
        ),
        NARROWS,  # deny rules and the tightening switches
        PermissionsRule,
    ),
    SettingKey(
        ("hooks", "disableAllHooks", "allowManagedHooksOnly"),
        ("hooks", "hooks_off"),
        IGNORED,  # its hooks are listed; it cannot turn the user's off
        HooksRule,
    ),
    SettingKey(
        ("env",), ("env",), IGNORED, Value(_env, Merge.BY_KEY, origin=True, describe=_names)
    ),
    SettingKey(("model",), ("model",), APPLIES, Value(_string, origin=True)),
    # a command the REPL runs: an untrusted project's is ignored, as its hooks are
    SettingKey(
        ("statusLine",),
        ("status_line",),
        IGNORED,
        Value(
            parse_status_line,
            origin=True,
            describe=describe_status_line,
            bad=Severity.WARNING,  # Claude Code's key: a bad value never stops the run
        ),
    ),
    # only matters when MCP tools are deferred: a bad value is shown, the run goes on
    SettingKey(
        ("toolSearch",), ("tool_search",), APPLIES, Value(_tool_search, bad=Severity.WARNING)
    ),
    # these two change what the user pays: not a project's to decide without trust
    SettingKey(("compaction",), ("compaction",), IGNORED, Value(_compaction, origin=True)),
    SettingKey(("cacheTtl",), ("cache_ttl",), IGNORED, Value(_cache_ttl, origin=True)),
    # where every transcript goes (a remote database included): not an untrusted project's
    # to redirect
    SettingKey(("sessionStore",), ("session_store",), IGNORED, Value(_session_store, origin=True)),
    SettingKey(("sandbox",), ("sandbox",), NARROWS, SandboxMerger),
    SettingKey(("enabledPlugins",), ("enabled_plugins",), IGNORED, EnabledPluginsMerger),
    SettingKey(
        ("enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers"),
        ("mcp_json",),
        NARROWS,  # its refusals count
        McpApprovalMerger,
    ),
    SettingKey(
        ("allowedMcpServers", "deniedMcpServers", "allowManagedMcpServersOnly"),
        ("mcp_policy",),
        NARROWS,  # its denials count
        McpPolicyMerger,
    ),
    SettingKey(
        ("allowedHttpHookUrls", "httpHookAllowedEnvVars"),
        ("http_hooks",),
        IGNORED,  # allowlists: merged in, they would widen the user's
        HttpHookPolicyMerger,
    ),
    # only narrows: true in any file holds, an untrusted project's too
    SettingKey(
        ("disableSkillShellExecution",),
        ("disable_skill_shell",),
        APPLIES,
        Value(_boolean, Merge.ANY_TRUE),
    ),
    SettingKey(
        ("trustedFolders",),
        ("trusted_folders",),
        IGNORED,
        Value(_paths, Merge.CONCAT),
        read_from=_users_own_file,
    ),
    SettingKey(("$schema",), (), APPLIES, None),  # editors' schema link: accepted, unused
)
"""Every implemented top-level key, in the order a file's problems are reported."""

TOP_LEVEL_KEYS = table_keys(SETTINGS_TABLE)
"""Keys settings files may hold and queryloop implements (`SETTINGS_TABLE`); Claude Code's
other keys are classified in `config.claude_settings`; any other is a warning."""
