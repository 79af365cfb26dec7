"""Workspace trust: a stranger's repository must not run its code on our machine.

A project's own files can widen what the agent may do: allow/ask rules, hooks (shell
commands), `env`, `defaultMode`, additional directories and MCP servers (processes). Until the
user trusts the folder once, those are ignored and a notice lists them; the project's deny
rules still apply, because they only ever narrow.

Trust is recorded in the user settings file, `$QUERYLOOP_HOME/settings.json`, as
`"trustedFolders": ["/abs/path", ...]`. Trusting a folder trusts its subfolders. User settings
and what the user passes on the command line (`--mcp-config`, `--allowed-tools`) are always
trusted.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import ConfigError
from ..settings import (
    Settings,
    SettingsProblem,
    load_settings,
    queryloop_home,
    read_settings_file,
    user_settings_path,
)
from ..tools.mcp_config import MCP_JSON, McpServerConfig, load_mcp_config
from .paths import real_path
from .rules import RuleSet

TRUST_HINT = "run `queryloop trust` (or pass --trust) in this folder to trust it"


class SettingsError(ConfigError):
    """Settings or MCP config files that cannot be used: the run must not start.

    `problems` lists each one as `file:line:column: what is wrong`.
    """

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        listed = "; ".join(self.problems)
        super().__init__(
            f"invalid settings, so nothing was run (queryloop never runs with fewer deny rules "
            f"than you wrote): {listed}"
        )


def trusted_folders(user_home: Path | None = None) -> list[Path]:
    """The folders recorded as trusted in the user settings file."""
    data, _problem = read_settings_file(user_settings_path(user_home))
    folders = data.get("trustedFolders") if data else None
    if not isinstance(folders, list):
        return []
    return [Path(f).expanduser() for f in folders if isinstance(f, str)]


def is_trusted(cwd: Path, user_home: Path | None = None) -> bool:
    """True when `cwd` or a folder above it was trusted."""
    target = real_path(cwd)
    for folder in trusted_folders(user_home):
        base = real_path(folder)
        if target == base or base in target.parents:
            return True
    return False


def trust_folder(cwd: Path, user_home: Path | None = None) -> Path:
    """Record `cwd` as trusted in the user settings file; returns that file's path.

    Keeps every other key. Raises ConfigError when the file exists but is not valid JSON (we
    will not overwrite a file the user must fix first).
    """
    path = user_settings_path(user_home)
    data, problem = read_settings_file(path)
    if problem is not None:
        raise ConfigError(f"cannot record trust: {problem}")
    data = dict(data or {})
    folders = [f for f in data.get("trustedFolders", []) if isinstance(f, str)]
    folder = str(real_path(cwd))
    if folder not in folders:
        folders.append(folder)
    data["trustedFolders"] = folders
    _write_json_atomic(path, data)
    return path


def _write_json_atomic(path: Path, data: Mapping[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".settings-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


@dataclass(frozen=True)
class Workspace:
    """Everything the CLI and `Agent` need from the files around a working folder."""

    cwd: Path
    trusted: bool
    settings: Settings
    mcp_servers: Mapping[str, McpServerConfig] = field(default_factory=dict)
    notices: tuple[str, ...] = ()
    """Messages for the user: what was ignored and why, and broken files."""
    problems: tuple[SettingsProblem | str, ...] = ()


def load_workspace(
    cwd: Path,
    *,
    user_home: Path | None = None,
    trust_override: bool | None = None,
    mcp_config_files: Sequence[Path] = (),
    allowed_tools: Sequence[str] = (),
    disallowed_tools: Sequence[str] = (),
) -> Workspace:
    """The effective settings, MCP servers and notices for `cwd`, in one call.

    `trust_override`: True/False force trust for this run (the CLI's `--trust` records it with
    `trust_folder` too); None consults the recorded trusted folders. `mcp_config_files`,
    `allowed_tools` and `disallowed_tools` come from the command line and are always applied.

    Fails closed: raises `SettingsError` (a `ConfigError`) when a settings file cannot be read
    or parsed, holds a value of the wrong type or a rule that does not parse, or when an
    `--mcp-config` file (or a trusted project's `.mcp.json`) is missing or invalid. Warnings
    (unknown keys) become `notices`.
    """
    home = user_home or queryloop_home()
    trusted = is_trusted(cwd, home) if trust_override is None else trust_override
    settings = load_settings(cwd, user_home=home, trusted=trusted)
    problems: list[SettingsProblem | str] = list(settings.problems)
    ignored = list(settings.ignored)

    errors: list[str] = [str(p) for p in settings.problems if p.is_error]
    project_servers, mcp_problems = load_mcp_config(cwd / MCP_JSON)
    (errors if trusted else problems).extend(mcp_problems)
    servers: dict[str, McpServerConfig] = {}
    if trusted:
        servers.update(project_servers)
    elif project_servers:
        ignored.append(f"{cwd / MCP_JSON}: MCP servers " + ", ".join(sorted(project_servers)))
    for extra in mcp_config_files:
        if not extra.is_file():
            errors.append(f"{extra}:1:1: --mcp-config file not found")
            continue
        found, extra_problems = load_mcp_config(extra)
        servers.update(found)
        errors.extend(extra_problems)
    if errors:
        raise SettingsError(errors)

    cli_rules = RuleSet.from_strings(
        allow=allowed_tools, deny=disallowed_tools, source="command line", root=cwd
    )
    settings = replace(settings, rules=settings.rules.merged(cli_rules))
    notices = [f"settings warning: {p}" for p in problems]
    if ignored:
        notices.append(
            f"{cwd} is not a trusted folder, so its project settings were ignored (deny rules "
            f"still apply); {TRUST_HINT}. Ignored:\n  " + "\n  ".join(ignored)
        )
    return Workspace(cwd, trusted, settings, servers, tuple(notices), tuple(problems))
