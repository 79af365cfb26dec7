"""Plugins in Claude Code's layout, from local folders: which load, and what each contributes.

A plugin is a folder (reference: https://code.claude.com/docs/en/plugins-reference):

    my-plugin/
    ├── .claude-plugin/plugin.json   # the manifest (optional): name, version, description,
    │                                #   custom paths for commands, agents, skills, hooks,
    │                                #   mcpServers
    ├── commands/   agents/   skills/<name>/SKILL.md
    ├── hooks/hooks.json             # {"hooks": {"PreToolUse": [...]}}
    ├── .mcp.json                    # {"mcpServers": {...}}
    └── bin/                         # on the Bash tool's PATH while the plugin is enabled

Which plugins load:

- `--plugin-dir DIR` (repeatable): the user's explicit choice, named `<name>@inline`; it
  wins over an installed plugin of the same name (Claude Code's rule for local copies).
- `enabledPlugins` in settings, `{"name@marketplace": true}`, from the files the workspace
  trusts (an untrusted project's settings cannot enable a plugin; `config.settings` keeps
  those out). queryloop installs nothing: an enabled plugin is looked up where Claude Code
  keeps installed plugins (`~/.claude/plugins/installed_plugins.json`, its `cache/<market>/
  <name>/<version>/`) and the same under `$QUERYLOOP_HOME/plugins/`. One not found there is
  named in one notice (its marketplace cannot be reached offline), never an error.

Manifest rules (Claude Code's): `name` defaults to the folder's name; `commands` and
`agents` paths replace the default folder, `skills` paths add to it; `hooks` and
`mcpServers` may be a path or inline, added to `hooks/hooks.json` and `.mcp.json`. Paths are
relative to the plugin root and may not leave it (such a component is skipped with a notice).
A manifest, hooks or MCP file that does not parse, or a field of the wrong type, stops the run
with file:line:column, as a settings file does: a plugin's guard hooks must not silently not
run.

`${CLAUDE_PLUGIN_ROOT}` (the plugin's folder) and `${CLAUDE_PLUGIN_DATA}`
(`$QUERYLOOP_HOME/plugins/data/<id>`, created when the plugin loads) are exported to its
hooks and MCP servers and substituted in their commands, arguments and env, in its skills'
and commands' text and `allowed-tools`, and in its agents' prompts. Its MCP servers are named
`plugin_<plugin>_<server>` (tools `mcp__plugin_<plugin>_<server>__<tool>`), its commands,
skills and agents `<plugin>:<name>`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..hooks import CommandHook, HookMatcher, HooksConfig, parse_hooks
from ..tools.mcp_server import McpServerConfig
from .hook_conditions import RuleCondition
from .mcp import MCP_JSON, parse_server
from .settings_file import FileContext, Severity

MANIFEST = Path(".claude-plugin") / "plugin.json"
HOOKS_FILE = Path("hooks") / "hooks.json"
INLINE = "inline"
"""The marketplace part of a `--plugin-dir` plugin's id (`name@inline`, as Claude Code)."""
ROOT_VAR, DATA_VAR = "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")


class PluginOrigin(StrEnum):
    """Why a plugin loaded."""

    FLAG = "--plugin-dir"
    SETTINGS = "enabledPlugins"


@dataclass(frozen=True)
class Plugin:
    """One loaded plugin and what it contributes (paths resolved inside its root)."""

    name: str
    id: str
    """`name@marketplace` (`name@inline` for `--plugin-dir`)."""
    root: Path
    data_dir: Path
    origin: PluginOrigin
    version: str = ""
    description: str = ""
    commands: tuple[Path, ...] = ()
    """Command folders or files (`commands/`, or the manifest's paths)."""
    agents: tuple[Path, ...] = ()
    skills: tuple[Path, ...] = ()
    """Folders of `<name>/SKILL.md` folders (`skills/` and the manifest's)."""
    hooks: HooksConfig = field(default_factory=HooksConfig)
    mcp_servers: Mapping[str, McpServerConfig] = field(default_factory=dict)
    bin_dir: Path | None = None

    @property
    def variables(self) -> dict[str, str]:
        """`CLAUDE_PLUGIN_ROOT` and `CLAUDE_PLUGIN_DATA`, for substitution and the env."""
        return {ROOT_VAR: str(self.root), DATA_VAR: str(self.data_dir)}


@dataclass(frozen=True)
class PluginSet:
    """The session's plugins, what the user is told about them, and what must stop the run."""

    plugins: tuple[Plugin, ...] = ()
    notices: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()

    def hooks(self) -> HooksConfig:
        """Every plugin's hooks, in load order."""
        merged = HooksConfig()
        for plugin in self.plugins:
            merged = merged.merged(plugin.hooks)
        return merged

    def mcp_servers(self) -> dict[str, McpServerConfig]:
        """Every plugin's MCP servers, by their scoped names."""
        return {k: v for p in self.plugins for k, v in p.mcp_servers.items()}

    def bin_dirs(self) -> list[Path]:
        """The plugins' `bin/` folders, for the Bash tool's PATH."""
        return [p.bin_dir for p in self.plugins if p.bin_dir is not None]


@dataclass(frozen=True, slots=True)
class EnabledPlugin:
    """One `enabledPlugins` entry in force, and the settings file that set it."""

    id: str
    enabled: bool
    source: Path


class EnabledPluginsMerger:
    """`enabledPlugins` across settings files (`config.settings`): a later file's entry wins
    over an earlier one for the same plugin; an untrusted project's entries are ignored."""

    def __init__(self) -> None:
        self.entries: dict[str, EnabledPlugin] = {}

    def add(self, data: Mapping[str, object], ctx: FileContext) -> None:
        """One file's `enabledPlugins`: a wrong value is an error; a list (Claude Code's
        schema allows one) a warning, since queryloop does not use it."""
        raw = data.get("enabledPlugins")
        if raw is None:
            return
        if not isinstance(raw, Mapping):
            message = "'enabledPlugins' must be an object of \"name@market\": bool"
            ctx.problem("enabledPlugins", message)
            return
        for key, value in raw.items():
            if _string_list(value):  # Claude Code's schema allows a list of strings too
                note = "a list value is not understood by queryloop; the plugin is not loaded"
                ctx.problem(key, f"enabledPlugins {key!r}: {note}", Severity.WARNING)
            elif not isinstance(value, bool):
                ctx.problem(key, f"enabledPlugins {key!r} must be true or false")
            elif not ctx.trusted:
                ctx.ignore(f"enabledPlugins {key}")
            else:
                self.entries[key] = EnabledPlugin(key, value, ctx.file.path)

    def result(self) -> dict[str, EnabledPlugin]:
        """The entries in force."""
        return dict(self.entries)


def _string_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def load_plugins(
    dirs: Sequence[Path],
    enabled: Mapping[str, EnabledPlugin],
    *,
    home: Path,
    claude: Path,
) -> PluginSet:
    """The plugins of `--plugin-dir` folders, then those enabled in settings (found where
    they are installed), each name once (a `--plugin-dir` one wins)."""
    loaded: dict[str, Plugin] = {}
    notices: list[str] = []
    errors: list[str] = []
    for folder in dirs:
        _load_into(loaded, folder, None, PluginOrigin.FLAG, home, notices, errors)
    for entry in enabled.values():
        if not entry.enabled:
            continue
        name, _, market = entry.id.partition("@")
        root = find_installed(entry.id, [claude / "plugins", home / "plugins"])
        if root is None:
            notices.append(
                f"plugin {entry.id} is enabled in {entry.source} but not installed on this "
                f"machine; queryloop does not download plugins (marketplace "
                f"{market or '(none)'!r} cannot be reached offline), so it was not loaded"
            )
        elif name not in loaded:
            _load_into(loaded, root, entry.id, PluginOrigin.SETTINGS, home, notices, errors)
    return PluginSet(tuple(loaded.values()), tuple(notices), tuple(errors))


def find_installed(plugin_id: str, homes: Sequence[Path]) -> Path | None:
    """Where `name@market` is installed: its newest entry in a plugins folder's
    `installed_plugins.json`, else its newest version folder under `cache/<market>/<name>/`."""
    name, _, market = plugin_id.partition("@")
    for folder in homes:
        for entry in reversed(_installed_entries(folder / "installed_plugins.json", plugin_id)):
            path = Path(str(entry.get("installPath", ""))).expanduser()
            if str(path) and path.is_dir():
                return path
        versions = folder / "cache" / market / name
        found = sorted(
            (p for p in versions.iterdir() if p.is_dir()) if versions.is_dir() else (),
            key=lambda p: p.stat().st_mtime,
        )
        if found:
            return found[-1]
    return None


def read_plugin(
    root: Path, plugin_id: str | None, origin: PluginOrigin, home: Path
) -> tuple[Plugin | None, list[str], list[str]]:
    """One plugin folder: (the plugin or None, errors that stop the run, notices)."""
    root = root.expanduser().resolve()
    if not root.is_dir():
        return None, [f"{root}: plugin folder not found"], []
    manifest, errors = _manifest(root)
    if errors:
        return None, errors, []
    name = manifest.get("name", root.name)
    if not isinstance(name, str) or not _NAME.match(name):
        return None, [f"{root / MANIFEST}:1:1: plugin name {name!r} must be kebab-case"], []
    plugin_id = plugin_id or f"{name}@{INLINE}"
    data_dir = home / "plugins" / "data" / _ID_CHARS.sub("-", plugin_id)
    data_dir.mkdir(parents=True, exist_ok=True)
    reader = _Reader(root, manifest, {ROOT_VAR: str(root), DATA_VAR: str(data_dir)})
    plugin = Plugin(
        name=name,
        id=plugin_id,
        root=root,
        data_dir=data_dir,
        origin=origin,
        version=str(manifest.get("version") or ""),
        description=str(manifest.get("description") or ""),
        commands=reader.paths("commands", "commands", replaces=True),
        agents=reader.paths("agents", "agents", replaces=True),
        skills=reader.paths("skills", "skills", replaces=False),
        hooks=reader.hooks(),
        mcp_servers=reader.mcp_servers(name),
        bin_dir=root / "bin" if (root / "bin").is_dir() else None,
    )
    return plugin, reader.errors, reader.notices


def _load_into(
    loaded: dict[str, Plugin],
    root: Path,
    plugin_id: str | None,
    origin: PluginOrigin,
    home: Path,
    notices: list[str],
    errors: list[str],
) -> None:
    plugin, found_errors, found_notices = read_plugin(root, plugin_id, origin, home)
    errors.extend(found_errors)
    notices.extend(found_notices)
    if plugin is not None and not found_errors and plugin.name not in loaded:
        loaded[plugin.name] = plugin


def _manifest(root: Path) -> tuple[dict[str, Any], list[str]]:
    path = root / MANIFEST
    if not path.is_file():
        return {}, []
    data, error = _read_json(path)
    if error is not None:
        return {}, [error]
    if not isinstance(data, dict):
        return {}, [f"{path}:1:1: the manifest must be a JSON object"]
    return data, []


def _read_json(path: Path) -> tuple[Any, str | None]:
    try:
        text = path.read_text(encoding="utf-8").lstrip("\ufeff")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path}:1:1: cannot read: {exc}"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"{path}:{exc.lineno}:{exc.colno}: invalid JSON: {exc.msg}"


def _installed_entries(path: Path, plugin_id: str) -> list[Mapping[str, Any]]:
    data, error = _read_json(path) if path.is_file() else (None, None)
    plugins = data.get("plugins") if isinstance(data, dict) and error is None else None
    entries = plugins.get(plugin_id) if isinstance(plugins, dict) else None
    if isinstance(entries, Mapping):
        entries = [entries]
    found = [e for e in entries or [] if isinstance(e, Mapping)]
    return sorted(found, key=lambda e: str(e.get("lastUpdated", "")))


class _Reader:
    """Reads one plugin's components; collects errors (stop the run) and notices."""

    def __init__(self, root: Path, manifest: Mapping[str, Any], variables: dict[str, str]):
        self.root = root
        self.manifest = manifest
        self.variables = variables
        self.errors: list[str] = []
        self.notices: list[str] = []

    def paths(self, key: str, default: str, *, replaces: bool) -> tuple[Path, ...]:
        """The default folder (unless the manifest's paths replace it) and the manifest's."""
        declared = self._declared(key)
        found = [] if declared and replaces else [self.root / default]
        found += [p for p in (self._inside(text, key) for text in declared) if p is not None]
        return tuple(dict.fromkeys(p for p in found if p.exists()))

    def hooks(self) -> HooksConfig:
        """`hooks/hooks.json` and the manifest's `hooks` (paths or inline), with the plugin's
        variables in each command's environment."""
        config = HooksConfig()
        for raw, source in self._tables("hooks", self.root / HOOKS_FILE):
            parsed, problems = parse_hooks(raw, source=source, parse_condition=_condition(source))
            for problem in problems:
                (self.errors if problem.fatal else self.notices).append(problem.message)
            config = config.merged(parsed)
        return _with_env(config, self.variables)

    def mcp_servers(self, plugin: str) -> dict[str, McpServerConfig]:
        """`.mcp.json` and the manifest's `mcpServers`, named `plugin_<plugin>_<server>`,
        with the plugin's variables expanded and in each server's environment."""
        found: dict[str, McpServerConfig] = {}
        for table, source in self._tables("mcpServers", self.root / MCP_JSON):
            if not isinstance(table, Mapping):
                self.errors.append(f"{source}:1:1: 'mcpServers' must be an object")
                continue
            for key, raw in table.items():
                server, problem = parse_server(
                    f"plugin_{plugin}_{key}", raw, source=source, base=self.root,
                    environ=self.variables,
                )  # fmt: skip
                if problem:
                    self.errors.append(problem)
                if server is not None:
                    found[server.name] = _with_server_env(server, self.variables)
        return found

    def _tables(self, key: str, default: Path) -> list[tuple[object, str]]:
        """The `key` tables of a part that may be inline in the manifest (`{"key": {...}}`)
        or in files: the default file and the manifest's paths, each `{"key": {...}}`."""
        tables: list[tuple[object, str]] = []
        declared = self.manifest.get(key)
        if isinstance(declared, Mapping):
            tables.append((declared.get(key, declared), str(self.root / MANIFEST)))
            declared = None
        paths = [default, *(self._inside(t, key) for t in self._declared(key, declared))]
        for path in dict.fromkeys(p for p in paths if p is not None and p.is_file()):
            data, error = _read_json(path)
            if error is not None:
                self.errors.append(error)
            elif isinstance(data, Mapping):
                tables.append((data.get(key, {}), str(path)))
        return tables

    def _declared(self, key: str, value: object = ...) -> list[str]:
        value = self.manifest.get(key) if value is ... else value
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        self.errors.append(f"{self.root / MANIFEST}:1:1: {key!r} must be a path or a list of paths")
        return []

    def _inside(self, text: str, key: str) -> Path | None:
        path = (self.root / text).resolve()
        if Path(text).is_absolute() or "\\" in text or not path.is_relative_to(self.root):
            self.notices.append(
                f"{self.root / MANIFEST}: {key} path {text!r} escapes the plugin directory; "
                "that component was not loaded"
            )
            return None
        return path


def _condition(source: str) -> Callable[[str], RuleCondition]:
    """Reads a plugin hook's `if` rule (relative paths: the session's folder)."""
    return lambda text: RuleCondition.parse(text, source=source, root=None)


def _with_env(config: HooksConfig, variables: Mapping[str, str]) -> HooksConfig:
    """Each command hook runs with the plugin's variables in its environment."""
    events = {
        event: tuple(
            HookMatcher(
                m.matcher,
                [
                    replace(h, env={**variables, **h.env}) if isinstance(h, CommandHook) else h
                    for h in m.hooks
                ],
            )
            for m in matchers
        )
        for event, matchers in config.events.items()
    }
    return HooksConfig(events)


def _with_server_env(server: McpServerConfig, variables: Mapping[str, str]) -> McpServerConfig:
    if server.transport != "stdio":
        return server
    return replace(server, env={**variables, **server.env})
