"""Settings files: where they are, how they merge, and what went wrong reading them.

Files, lowest precedence first (Claude Code's shapes and order):

1. user: `$QUERYLOOP_HOME/settings.json` (QUERYLOOP_HOME defaults to `~/.queryloop`)
2. project: `<cwd>/.queryloop/settings.json`
3. local: `<cwd>/.queryloop/settings.local.json` (personal, not committed)
4. managed: `$QUERYLOOP_MANAGED_SETTINGS`, default `/etc/queryloop/managed-settings.json`
   (set by an administrator; always trusted, wins over the others)

Rule lists and hooks concatenate; `env` merges key by key; `model` and `permissions.defaultMode`
take the last file that sets them. Every problem becomes a `SettingsProblem` naming the file,
line and column and the fix. Settings fail closed: a file that cannot be read or parsed, a value
of the wrong type and a rule that does not parse are *errors* (`Settings.errors`), and
`config.workspace.load_workspace` refuses to run with any of them — nothing ever runs with
fewer deny rules than the user wrote. An unknown key is a *warning*. An untrusted project (see
`config.trust`) contributes only its deny rules and `model`; what it would have added is
listed in `Settings.ignored`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..compact.policy import COMPACTION_NAMES, CompactionName
from ..errors import ConfigError
from ..hooks import HooksConfig, parse_hooks
from ..permissions.modes import PermissionMode, parse_mode
from ..permissions.rules import PermissionRule, RuleBehavior, RuleSet
from .discovery import PROJECT_DIR, SettingSources
from .plugins import EnabledPlugin, EnabledPluginsMerger
from .sandbox import SandboxMerger, SandboxSettings

if TYPE_CHECKING:
    from ..context.cache_ttl import CacheTtlSetting


class SettingsScope(StrEnum):
    """Where a settings file lives."""

    USER = "user"
    PROJECT = "project"
    LOCAL = "local"
    MANAGED = "managed"


class Severity(StrEnum):
    """An error stops the run before any request; a warning is shown and the run goes on."""

    ERROR = "error"
    WARNING = "warning"


MANAGED_SETTINGS = Path("/etc/queryloop/managed-settings.json")
TOP_LEVEL_KEYS = frozenset(
    {
        "permissions",
        "hooks",
        "env",
        "model",
        "toolSearch",
        "compaction",
        "cacheTtl",
        "trustedFolders",
        "sandbox",
        "enabledPlugins",
        "$schema",
    }
)
"""Keys settings files may hold; any other is a warning (add new settings here)."""
PERMISSION_KEYS = frozenset(
    {
        "allow",
        "ask",
        "deny",
        "defaultMode",
        "additionalDirectories",
        "disableBypassPermissionsMode",
        "denyInsteadOfPrompting",
        "blockWritesOutsideWorkingDirectories",
    }
)
TIGHTENING_FLAGS = {
    "denyInsteadOfPrompting": "deny_instead_of_prompting",
    "blockWritesOutsideWorkingDirectories": "block_writes_outside",
}
"""Boolean `permissions` keys that only tighten: `true` in any file (an untrusted project's
included) turns them on, and no file's `false` turns them off (Claude Code: "true from any
scope, honored even when a managed source sets false")."""


@dataclass(frozen=True, slots=True)
class SettingsProblem:
    """A settings file that could not be (fully) used; shown to the user as a warning."""

    path: Path
    message: str
    line: int | None = None
    column: int | None = None
    severity: Severity = Severity.ERROR

    @property
    def is_error(self) -> bool:
        """True when the run must not start (see `Severity`)."""
        return self.severity is Severity.ERROR

    def __str__(self) -> str:
        where = str(self.path)
        if self.line is not None:
            where += f":{self.line}:{self.column or 1}"
        return f"{where}: {self.message}"

    def as_error(self) -> ConfigError:
        """The same problem as an exception, for callers that want to fail hard."""
        return ConfigError(str(self))


@dataclass(frozen=True, slots=True)
class SettingsFile:
    """One settings file that was read."""

    scope: SettingsScope
    path: Path
    data: Mapping[str, Any]


@dataclass(frozen=True)
class Settings:
    """The merged, effective settings and where each piece came from."""

    rules: RuleSet = field(default_factory=RuleSet)
    default_mode: PermissionMode | None = None
    additional_directories: tuple[Path, ...] = ()
    disable_bypass_mode: bool = False
    """`permissions.disableBypassPermissionsMode: "disable"` in any file."""
    deny_instead_of_prompting: bool = False
    """`permissions.denyInsteadOfPrompting: true` in any file: every ask is a denial."""
    block_writes_outside: bool = False
    """`permissions.blockWritesOutsideWorkingDirectories: true` in any file."""
    hooks: HooksConfig = field(default_factory=HooksConfig)
    env: Mapping[str, str] = field(default_factory=dict)
    model: str | None = None
    tool_search: str | int | None = None
    """`"toolSearch"`: when MCP tools go behind ToolSearch (`queryloop.context.tool_search`)."""
    compaction: CompactionName | None = None
    """`"compaction"`: the compaction policy, "default" or "economy" (`compact.policy`)."""
    cache_ttl: CacheTtlSetting | None = None
    """`"cacheTtl"`: how long prompt-cache entries live ("5m", "1h", "auto";
    `queryloop.context.cache_ttl`)."""
    trusted_folders: tuple[Path, ...] = ()
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    """`"sandbox"`: the Bash sandbox (`config.sandbox`, docs/sandbox.md)."""
    enabled_plugins: Mapping[str, EnabledPlugin] = field(default_factory=dict)
    """`"enabledPlugins"` of the trusted files (`config.plugins`, docs/plugins.md)."""
    files: tuple[SettingsFile, ...] = ()
    problems: tuple[SettingsProblem, ...] = ()
    ignored: tuple[str, ...] = ()
    """What untrusted project files asked for and did not get, one line each."""
    origins: Mapping[str, Path] = field(default_factory=dict)
    """Which file set `model`, `defaultMode` and each `env.NAME`."""

    @property
    def errors(self) -> tuple[SettingsProblem, ...]:
        """The problems that must stop a run (unreadable files, bad values, bad rules)."""
        return tuple(p for p in self.problems if p.is_error)


def queryloop_home() -> Path:
    """`$QUERYLOOP_HOME`, or `~/.queryloop`."""
    value = os.environ.get("QUERYLOOP_HOME")
    return Path(value).expanduser() if value else Path.home() / ".queryloop"


def user_settings_path(user_home: Path | None = None) -> Path:
    """The user settings file inside `user_home` (default: `queryloop_home()`)."""
    return (user_home or queryloop_home()) / "settings.json"


def managed_settings_path() -> Path:
    """`$QUERYLOOP_MANAGED_SETTINGS`, or `/etc/queryloop/managed-settings.json`."""
    value = os.environ.get("QUERYLOOP_MANAGED_SETTINGS")
    return Path(value).expanduser() if value else MANAGED_SETTINGS


def settings_paths(cwd: Path, user_home: Path | None = None) -> list[tuple[SettingsScope, Path]]:
    """The settings files that apply in `cwd`, lowest precedence first."""
    project = cwd / PROJECT_DIR
    return [
        (SettingsScope.USER, user_settings_path(user_home)),
        (SettingsScope.PROJECT, project / "settings.json"),
        (SettingsScope.LOCAL, project / "settings.local.json"),
        (SettingsScope.MANAGED, managed_settings_path()),
    ]


def read_settings_file(path: Path) -> tuple[dict[str, Any] | None, SettingsProblem | None]:
    """The file's JSON object; None and no problem when absent; None and a problem when broken."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, SettingsProblem(path, f"cannot read settings file: {reason}", 1, 1)
    if not text.strip():
        return {}, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        fix = "fix the JSON syntax (no comments or trailing commas)"
        return None, SettingsProblem(path, f"invalid JSON: {exc.msg}; {fix}", exc.lineno, exc.colno)
    if not isinstance(data, dict):
        return None, SettingsProblem(path, "settings must be a JSON object", 1, 1)
    return data, None


def load_settings(
    cwd: Path,
    *,
    user_home: Path | None = None,
    trusted: bool,
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
) -> Settings:
    """Read and merge the user, project and local settings for `cwd`.

    `user_home` is the queryloop home folder (default `$QUERYLOOP_HOME` or `~/.queryloop`).
    When `trusted` is False the project and local files contribute only deny rules and `model`.
    A scope `sources` leaves out is not read at all (its deny rules do not apply either, as
    with Claude Code's `--setting-sources`); the managed settings always are.
    """
    merger = _Merger(cwd)
    for scope, path in settings_paths(cwd, user_home):
        if not sources.reads(scope.value):
            continue
        data, problem = read_settings_file(path)
        if problem is not None:
            merger.problems.append(problem)
        if data is not None:
            is_project = scope in (SettingsScope.PROJECT, SettingsScope.LOCAL)
            merger.add(SettingsFile(scope, path, data), trusted=trusted or not is_project)
    return merger.result()


class _Merger:
    """Accumulates files in precedence order; each `add` validates one file's keys."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.rules = RuleSet()
        self.default_mode: PermissionMode | None = None
        self.dirs: list[Path] = []
        self.flags: dict[str, bool] = {}
        self.hooks = HooksConfig()
        self.env: dict[str, str] = {}
        self.model: str | None = None
        self.tool_search: str | int | None = None
        self.compaction: CompactionName | None = None
        self.cache_ttl: CacheTtlSetting | None = None
        self.trusted_folders: list[Path] = []
        self.sandbox = SandboxMerger()
        self.plugins = EnabledPluginsMerger()
        self.files: list[SettingsFile] = []
        self.problems: list[SettingsProblem] = []
        self.ignored: list[str] = []
        self.origins: dict[str, Path] = {}
        self._text: str = ""

    def result(self) -> Settings:
        return Settings(
            rules=self.rules,
            default_mode=self.default_mode,
            additional_directories=tuple(self.dirs),
            disable_bypass_mode=self.flags.get("disable_bypass_mode", False),
            deny_instead_of_prompting=self.flags.get("deny_instead_of_prompting", False),
            block_writes_outside=self.flags.get("block_writes_outside", False),
            hooks=self.hooks,
            env=dict(self.env),
            model=self.model,
            tool_search=self.tool_search,
            compaction=self.compaction,
            cache_ttl=self.cache_ttl,
            trusted_folders=tuple(self.trusted_folders),
            sandbox=self.sandbox.result(),
            enabled_plugins=self.plugins.result(),
            files=tuple(self.files),
            problems=tuple(self.problems),
            ignored=tuple(self.ignored),
            origins=dict(self.origins),
        )

    def add(self, file: SettingsFile, *, trusted: bool) -> None:
        self.files.append(file)
        try:
            self._text = file.path.read_text(encoding="utf-8")
        except OSError:
            self._text = ""
        project = file.scope in (SettingsScope.PROJECT, SettingsScope.LOCAL)
        root = self.cwd if project else file.path.parent
        data = file.data
        self._unknown_keys(file, data, TOP_LEVEL_KEYS, "")
        self._add_permissions(file, data.get("permissions", {}), root, trusted)
        self._add_hooks(file, data.get("hooks"), trusted)
        self._add_env(file, data.get("env"), trusted)
        model = data.get("model")
        if model is not None:
            if isinstance(model, str):
                self.model = model
                self.origins["model"] = file.path
            else:
                self._problem(file, "model", "'model' must be a string")
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
        )
        if file.scope is SettingsScope.USER:  # a project can never trust itself
            folders = self._str_list(file, data, "trustedFolders")
            self.trusted_folders.extend(Path(f).expanduser() for f in folders)

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

    def _unknown_keys(
        self, file: SettingsFile, data: Mapping[str, Any], known: frozenset[str], where: str
    ) -> None:
        for key in data:
            if key not in known:
                self._problem(file, key, f"unknown key {where}{key!r} (ignored)", Severity.WARNING)

    def _add_permissions(self, file: SettingsFile, raw: object, root: Path, trusted: bool) -> None:
        if not isinstance(raw, Mapping):
            self._problem(file, "permissions", "'permissions' must be an object")
            return
        self._unknown_keys(file, raw, PERMISSION_KEYS, "in 'permissions': ")
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
        if value is None:
            return
        try:
            mode = parse_mode(value) if isinstance(value, str) else parse_mode(repr(value))
        except ConfigError as exc:
            self._problem(file, "defaultMode", str(exc))
            return
        if not trusted:
            self.ignored.append(f"{file.path}: defaultMode {mode.value}")
            return
        self.default_mode = mode
        self.origins["defaultMode"] = file.path

    def _rules(
        self, file: SettingsFile, raw: Mapping[str, Any], behavior: RuleBehavior, root: Path
    ) -> list[PermissionRule]:
        rules: list[PermissionRule] = []
        for text in self._str_list(file, raw, behavior):
            try:
                rules.append(PermissionRule.parse(text, behavior, source=str(file.path), root=root))
            except ConfigError as exc:
                self._problem(file, text, str(exc))
        return rules

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
            self.hooks = self.hooks.merged(hooks)
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

    def _str_list(self, file: SettingsFile, raw: Mapping[str, Any], key: str) -> list[str]:
        value = raw.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self._problem(file, key, f"'{key}' must be a list of strings")
            return []
        return list(value)

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
