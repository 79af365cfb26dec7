"""Merging settings files, one at a time in precedence order (`config.settings.load_settings`).

Each `SettingsMerger.add` validates one file's keys and adds what it may add: everything for a
trusted file, only what narrows for an untrusted project's (its deny rules, the tightening
switches, a stricter sandbox, `model`). Single values (`model`, `defaultMode`,
`disableAllHooks`, `enableAllProjectMcpServers`) take the last file that sets them; rule
lists, hooks, `additionalDirectories` and the MCP approval lists are unions; `env` merges key
by key. Deny always wins at evaluation (deny, then ask, then allow), whichever file a rule
came from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..compact.policy import COMPACTION_NAMES, CompactionName
from ..errors import ConfigError
from ..hooks import HooksConfig, parse_hooks
from ..permissions.modes import PermissionMode, parse_mode
from ..permissions.rules import PermissionRule, RuleBehavior, RuleSet
from .claude_settings import (
    CLAUDE_IGNORED,
    CLAUDE_MODES,
    CLAUDE_NOT_APPLICABLE,
    CLAUDE_PERMISSION_KEYS,
    ignored_keys,
)
from .discovery import Layout
from .hook_policy import HttpHookPolicyMerger
from .mcp_approval import McpJsonApproval
from .mcp_policy import McpPolicyMerger
from .plugins import EnabledPluginsMerger
from .sandbox import SandboxMerger
from .settings import (
    PERMISSION_KEYS,
    TIGHTENING_FLAGS,
    TOP_LEVEL_KEYS,
    Settings,
    SettingsFile,
    SettingsProblem,
    SettingsScope,
    Severity,
)

if TYPE_CHECKING:
    from ..context.cache_ttl import CacheTtlSetting

_ACCEPTED = TOP_LEVEL_KEYS | CLAUDE_NOT_APPLICABLE
_MANAGED_ONLY = ("allowManagedHooksOnly", "allowManagedPermissionRulesOnly")


class SettingsMerger:
    """Accumulates files in precedence order; `result()` is the merged `Settings`."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.rules = RuleSet()
        self.default_mode: PermissionMode | None = None
        self.dont_ask = False
        self.dirs: list[Path] = []
        self.flags: dict[str, bool] = {}
        self.hooks: list[tuple[SettingsFile, HooksConfig]] = []
        self.disable_all_hooks = False
        self.env: dict[str, str] = {}
        self.model: str | None = None
        self.tool_search: str | int | None = None
        self.compaction: CompactionName | None = None
        self.cache_ttl: CacheTtlSetting | None = None
        self.trusted_folders: list[Path] = []
        self.sandbox = SandboxMerger()
        self.plugins = EnabledPluginsMerger()
        self.mcp_policy = McpPolicyMerger()
        self.http_hooks = HttpHookPolicyMerger()
        self.mcp_enable_all = False
        self.mcp_enabled: set[str] | None = None
        self.mcp_disabled: set[str] = set()
        self.files: list[SettingsFile] = []
        self.problems: list[SettingsProblem] = []
        self.ignored: list[str] = []
        self.origins: dict[str, Path] = {}
        self._told: set[str] = set()
        self._text: str = ""

    def result(self) -> Settings:
        """The merged settings of every file added."""
        rules, hooks = self._managed_policy()
        return Settings(
            rules=rules,
            default_mode=self.default_mode,
            additional_directories=tuple(self.dirs),
            disable_bypass_mode=self.flags.get("disable_bypass_mode", False),
            deny_instead_of_prompting=self.dont_ask
            or self.flags.get("deny_instead_of_prompting", False),
            block_writes_outside=self.flags.get("block_writes_outside", False),
            hooks=hooks,
            hooks_off=self._hooks_off(),
            env=dict(self.env),
            disable_skill_shell=self.flags.get("disable_skill_shell", False),
            model=self.model,
            tool_search=self.tool_search,
            compaction=self.compaction,
            cache_ttl=self.cache_ttl,
            trusted_folders=tuple(self.trusted_folders),
            sandbox=self.sandbox.result(),
            enabled_plugins=self.plugins.result(),
            mcp_json=McpJsonApproval(
                self.mcp_enable_all,
                frozenset(self.mcp_enabled) if self.mcp_enabled is not None else None,
                frozenset(self.mcp_disabled),
            ),
            mcp_policy=self.mcp_policy.result(),
            http_hooks=self.http_hooks.result(),
            files=tuple(self.files),
            problems=tuple(self.problems),
            ignored=tuple(self.ignored),
            origins=dict(self.origins),
        )

    def add(self, file: SettingsFile, *, trusted: bool) -> None:
        """One file's settings; `trusted` False for an untrusted project's own files."""
        self.files.append(file)
        try:
            self._text = file.path.read_text(encoding="utf-8")
        except OSError:
            self._text = ""
        project = file.scope in (SettingsScope.PROJECT, SettingsScope.LOCAL)
        root = self.cwd if project else file.path.parent
        data = file.data
        self._unknown_keys(file, data)
        self._add_permissions(file, data.get("permissions", {}), root, trusted)
        self._add_hooks(file, data.get("hooks"), trusted)
        self._add_env(file, data.get("env"), trusted)
        self._add_model(file, data.get("model"))
        self._add_tool_search(file, data.get("toolSearch"))
        self._add_compaction(file, data.get("compaction"), trusted)
        self._add_cache_ttl(file, data.get("cacheTtl"), trusted)
        self._add_sandbox(file, data.get("sandbox"), root, trusted)
        self.plugins.add(
            data.get("enabledPlugins"),
            source=file.path,
            trusted=trusted,
            problem=lambda key, message: self._problem(file, key, message),
            ignore=lambda text: self.ignored.append(f"{file.path}: {text}"),
            warn=lambda key, message: self._problem(file, key, message, Severity.WARNING),
        )
        self._add_mcp_approval(file, data, trusted)
        self._add_policies(file, data, trusted)
        self._add_hook_switches(file, data, trusted)
        if file.scope is SettingsScope.USER and file.layout is Layout.QUERYLOOP:
            folders = self._str_list(file, data, "trustedFolders")  # a project never trusts
            self.trusted_folders.extend(Path(f).expanduser() for f in folders)  # itself

    # ---- top level -----------------------------------------------------------------------

    def _unknown_keys(self, file: SettingsFile, data: Mapping[str, Any]) -> None:
        """Keys neither program knows: one warning each. Claude Code's keys queryloop does not
        use: one warning per file naming them (each key once per load)."""
        unused: list[str] = []
        for key in data:
            if key in _ACCEPTED:
                continue
            if key in CLAUDE_IGNORED:
                if key not in self._told:
                    self._told.add(key)
                    unused.append(key)
                continue
            self._problem(file, key, f"unknown key {key!r} (ignored)", Severity.WARNING)
        if unused:
            self._problem(file, unused[0], ignored_keys(unused), Severity.WARNING)

    def _add_model(self, file: SettingsFile, model: object) -> None:
        if model is None:
            return
        if isinstance(model, str):
            self.model = model
            self.origins["model"] = file.path
        else:
            self._problem(file, "model", "'model' must be a string")

    def _add_tool_search(self, file: SettingsFile, value: object) -> None:
        if value is None:
            return
        from ..context.tool_search import parse_tool_search

        try:
            if not isinstance(value, str | int):
                raise ConfigError(f"{value!r} is not a string or a token count")
            parse_tool_search(value)
        except ConfigError as exc:
            # only when MCP tools are deferred: shown, but no reason to stop the run
            self._problem(file, "toolSearch", f"'toolSearch': {exc}", Severity.WARNING)
            return
        self.tool_search = value

    def _add_compaction(self, file: SettingsFile, value: object, trusted: bool) -> None:
        """`"compaction"`: a policy name; anything else is an error (a user who asked for
        economy must not pay for the default without knowing). An untrusted project's is
        ignored, like everything but its deny rules and model."""
        if value is None:
            return
        if value not in COMPACTION_NAMES:
            names = " or ".join(f'"{n}"' for n in COMPACTION_NAMES)
            self._problem(file, "compaction", f"'compaction' must be {names}, not {value!r}")
        elif not trusted:
            self.ignored.append(f"{file.path}: compaction {value}")
        else:
            self.compaction = value
            self.origins["compaction"] = file.path

    def _add_cache_ttl(self, file: SettingsFile, value: object, trusted: bool) -> None:
        """`"cacheTtl"`: "5m", "1h" or "auto"; anything else is an error (a user who asked for
        hour-long entries must not pay for expired ones without knowing). An untrusted
        project's is ignored, like `compaction`: it would change what the user pays."""
        if value is None:
            return
        from ..context.cache_ttl import parse_cache_ttl

        try:
            ttl = parse_cache_ttl(value)
        except ConfigError as exc:
            self._problem(file, "cacheTtl", f"'cacheTtl': {exc}")
            return
        if not trusted:
            self.ignored.append(f"{file.path}: cacheTtl {ttl}")
        else:
            self.cache_ttl = ttl
            self.origins["cacheTtl"] = file.path

    def _add_sandbox(self, file: SettingsFile, raw: object, root: Path, trusted: bool) -> None:
        """The `sandbox` key (`config.sandbox`): an untrusted project may only tighten it."""

        def problem(key: str, message: str, is_error: bool) -> None:
            self._problem(file, key, message, Severity.ERROR if is_error else Severity.WARNING)

        self.sandbox.add(
            raw,
            root=root,
            trusted=trusted,
            managed=file.scope is SettingsScope.MANAGED,
            problem=problem,
            ignore=lambda text: self.ignored.append(f"{file.path}: {text}"),
        )

    def _add_mcp_approval(self, file: SettingsFile, data: Mapping[str, Any], trusted: bool) -> None:
        """Claude Code's `.mcp.json` approval keys (`config.mcp_approval`). An untrusted
        project's approvals are ignored; its refusals count (they only narrow)."""
        disabled = self._str_list(file, data, "disabledMcpjsonServers")
        self.mcp_disabled.update(disabled)
        enabled = self._str_list(file, data, "enabledMcpjsonServers")
        enable_all = self._bool(file, data, "enableAllProjectMcpServers")
        if not trusted:
            if enabled or enable_all:
                self.ignored.append(f"{file.path}: MCP server approvals")
            return
        if "enabledMcpjsonServers" in data:
            self.mcp_enabled = (self.mcp_enabled or set()) | set(enabled)
        if enable_all is not None:
            self.mcp_enable_all = enable_all

    def _add_policies(self, file: SettingsFile, data: Mapping[str, Any], trusted: bool) -> None:
        """The MCP server policy (`allowedMcpServers`, `deniedMcpServers`,
        `allowManagedMcpServersOnly`; `config.mcp_policy`) and the http hook limits
        (`allowedHttpHookUrls`, `httpHookAllowedEnvVars`; `config.hook_policy`)."""

        def problem(key: str, message: str, is_error: bool) -> None:
            self._problem(file, key, message, Severity.ERROR if is_error else Severity.WARNING)

        def ignore(text: str) -> None:
            self.ignored.append(f"{file.path}: {text}")

        managed = file.scope is SettingsScope.MANAGED
        self.mcp_policy.add(data, managed=managed, trusted=trusted, problem=problem, ignore=ignore)
        self.http_hooks.add(data, trusted=trusted, problem=problem, ignore=ignore)

    def _add_hook_switches(
        self, file: SettingsFile, data: Mapping[str, Any], trusted: bool
    ) -> None:
        """`disableAllHooks` (the last file that sets it; an untrusted project cannot turn
        the user's hooks off), the managed-only switches and `disableSkillShellExecution`
        (true in any file turns it on for good, like the tightening switches)."""
        disable = self._bool(file, data, "disableAllHooks")
        if disable is not None and trusted:
            self.disable_all_hooks = disable
            self.origins["disableAllHooks"] = file.path
        elif disable:
            self.ignored.append(f"{file.path}: disableAllHooks")
        if self._bool(file, data, "disableSkillShellExecution"):  # only narrows: any file's
            self.flags["disable_skill_shell"] = True  # true holds, an untrusted project's too
        for key in _MANAGED_ONLY:
            value = self._bool(file, data, key)
            if value and file.scope is not SettingsScope.MANAGED:
                message = f"'{key}' is honoured in managed settings only (ignored here)"
                self._problem(file, key, message, Severity.WARNING)
            elif value:
                self.flags[key] = True

    def _managed_policy(self) -> tuple[RuleSet, HooksConfig]:
        """The rules and hooks after `disableAllHooks` and the managed-only switches: with
        `allowManagedPermissionRulesOnly`, allow rules come from managed files only (their
        ask and deny rules stay: keeping them is stricter than Claude Code, never looser);
        with `allowManagedHooksOnly`, hooks do too."""
        managed = {str(f.path) for f in self.files if f.scope is SettingsScope.MANAGED}
        rules = self.rules
        if self.flags.get("allowManagedPermissionRulesOnly"):
            allow = tuple(r for r in rules.allow if r.source in managed)
            rules = RuleSet(allow=allow, ask=rules.ask, deny=rules.deny)
        hooks = HooksConfig()
        if self.disable_all_hooks:
            return rules, hooks
        for file, found in self.hooks:
            if self.flags.get("allowManagedHooksOnly") and file.scope is not SettingsScope.MANAGED:
                continue
            hooks = hooks.merged(found)
        return rules, hooks

    def _hooks_off(self) -> str | None:
        if self.disable_all_hooks:
            return "disableAllHooks"
        return "allowManagedHooksOnly" if self.flags.get("allowManagedHooksOnly") else None

    # ---- permissions ---------------------------------------------------------------------

    def _add_permissions(self, file: SettingsFile, raw: object, root: Path, trusted: bool) -> None:
        if not isinstance(raw, Mapping):
            self._problem(file, "permissions", "'permissions' must be an object")
            return
        for key in raw:
            if key not in PERMISSION_KEYS and key not in CLAUDE_PERMISSION_KEYS:
                message = f"unknown key in 'permissions': {key!r} (ignored)"
                self._problem(file, key, message, Severity.WARNING)
        for behavior in ("deny", "ask", "allow"):
            rules = self._rules(file, raw, behavior, root)
            if behavior == "deny" or trusted:
                self.rules = self.rules.merged(_ruleset(behavior, rules))
            elif rules:
                self.ignored.append(f"{file.path}: {behavior} rules " + ", ".join(map(str, rules)))
        self._add_mode(file, raw.get("defaultMode"), trusted)
        self._add_flags(file, raw)
        dirs = self._str_list(file, raw, "additionalDirectories")
        if dirs and not trusted:
            self.ignored.append(f"{file.path}: additionalDirectories " + ", ".join(dirs))
        elif dirs:
            self.dirs.extend((root / Path(d).expanduser()) for d in dirs)

    def _add_flags(self, file: SettingsFile, raw: Mapping[str, Any]) -> None:
        """The tightening switches: read from every file, trusted or not (they can only
        take permission away), and never turned off again by a later file."""
        disable = raw.get("disableBypassPermissionsMode")
        if disable == "disable":
            self.flags["disable_bypass_mode"] = True
        elif disable is not None:
            self._problem(
                file,
                "disableBypassPermissionsMode",
                "'disableBypassPermissionsMode' must be \"disable\" (Claude Code's only value)",
            )
        for key, name in TIGHTENING_FLAGS.items():
            value = raw.get(key)
            if isinstance(value, bool):
                self.flags[name] = self.flags.get(name, False) or value
            elif value is not None:
                self._problem(file, key, f"'{key}' must be true or false")

    def _add_mode(self, file: SettingsFile, value: object, trusted: bool) -> None:
        """`defaultMode`: queryloop's four modes and Claude Code's other values
        (`config.claude_settings.CLAUDE_MODES`); anything else is an error."""
        if value is None:
            return
        claude = CLAUDE_MODES.get(value) if isinstance(value, str) else None
        try:
            mode = (
                claude.mode
                if claude
                else parse_mode(value if isinstance(value, str) else repr(value))
            )
        except ConfigError as exc:
            self._problem(file, "defaultMode", str(exc))
            return
        if not trusted:
            self.ignored.append(f"{file.path}: defaultMode {value}")
            return
        if claude is not None and claude.warning:
            self._problem(file, "defaultMode", claude.warning, Severity.WARNING)
        self.default_mode = mode
        self.dont_ask = claude is not None and claude.dont_ask
        self.origins["defaultMode"] = file.path

    def _rules(
        self, file: SettingsFile, raw: Mapping[str, Any], behavior: RuleBehavior, root: Path
    ) -> list[PermissionRule]:
        """A rule list. A deny or ask rule that does not parse is an error (fail closed); an
        allow rule that does not parse is dropped with a warning, since dropping an allow
        rule never loosens anything (Claude Code itself writes such rules, e.g.
        `Bash(node -e ':*)`, when a user answers "always" to a command with a quote)."""
        rules: list[PermissionRule] = []
        for text in self._str_list(file, raw, behavior):
            try:
                rules.append(PermissionRule.parse(text, behavior, source=str(file.path), root=root))
            except ConfigError as exc:
                if behavior != "allow":
                    self._problem(file, text, str(exc))
                    continue
                dropped = f"{exc}; the allow rule was dropped (that never loosens anything)"
                self._problem(file, text, dropped, Severity.WARNING)
        return rules

    # ---- hooks and env -------------------------------------------------------------------

    def _add_hooks(self, file: SettingsFile, raw: object, trusted: bool) -> None:
        if raw is None:
            return
        from .hook_conditions import RuleCondition

        root = self.cwd if file.scope in (SettingsScope.PROJECT, SettingsScope.LOCAL) else None

        def condition(text: str) -> RuleCondition:
            return RuleCondition.parse(text, source=str(file.path), root=root)

        hooks, problems = parse_hooks(raw, source=str(file.path), parse_condition=condition)
        for problem in problems:  # Claude Code's keys never fail closed; its bad values do
            text = problem.message.removeprefix(f"{file.path}: ")
            severity = Severity.ERROR if problem.fatal else Severity.WARNING
            self._problem(file, "hooks", text, severity)
        if trusted:
            self.hooks.append((file, hooks))
        elif hooks.count():
            self.ignored.append(f"{file.path}: hooks " + "; ".join(hooks.describe()))

    def _add_env(self, file: SettingsFile, raw: object, trusted: bool) -> None:
        if raw is None:
            return
        if not isinstance(raw, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
        ):
            self._problem(file, "env", "'env' must be an object of string values")
            return
        if not trusted:
            if raw:
                self.ignored.append(f"{file.path}: env " + ", ".join(sorted(raw)))
            return
        for key, value in raw.items():
            self.env[key] = value
            self.origins[f"env.{key}"] = file.path

    # ---- values --------------------------------------------------------------------------

    def _str_list(self, file: SettingsFile, raw: Mapping[str, Any], key: str) -> list[str]:
        value = raw.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self._problem(file, key, f"'{key}' must be a list of strings")
            return []
        return list(value)

    def _bool(self, file: SettingsFile, raw: Mapping[str, Any], key: str) -> bool | None:
        value = raw.get(key)
        if value is None or isinstance(value, bool):
            return value
        self._problem(file, key, f"'{key}' must be true or false")
        return None

    def _problem(
        self, file: SettingsFile, key: str, message: str, severity: Severity = Severity.ERROR
    ) -> None:
        line, column = _locate(self._text, key)
        self.problems.append(SettingsProblem(file.path, message, line, column, severity))


def _ruleset(behavior: str, rules: list[PermissionRule]) -> RuleSet:
    found = tuple(rules)
    if behavior == "allow":
        return RuleSet(allow=found)
    return RuleSet(ask=found) if behavior == "ask" else RuleSet(deny=found)


def _locate(text: str, key: str) -> tuple[int, int]:
    """Line and column of the first `"key"` in the file (JSON has no positions after parsing);
    1:1 when it cannot be found (an escaped spelling)."""
    index = text.find(json.dumps(key))
    if index < 0:
        index = text.find(json.dumps(key, ensure_ascii=False))
    if index < 0:
        return 1, 1
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1
