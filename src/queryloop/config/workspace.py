"""The workspace: everything read from the files around a working folder, in one call.

`load_workspace` decides trust (`config.trust`), merges the settings files of both layouts
(`config.settings`), reads the project's `.mcp.json` (the servers Claude Code's approval
settings let start, `config.mcp_approval`) and any `--mcp-config` files (`config.mcp`), loads
the plugins (`--plugin-dir` and the trusted settings' `enabledPlugins`,
`config.plugins`: their hooks join the settings' hooks, their MCP servers the others) and
adds the command line's `--allowed-tools`/`--disallowed-tools`. It fails closed: the run
does not start with a settings, MCP config or plugin file it cannot use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import ConfigError
from ..permissions.rules import RuleSet
from ..tools.mcp_server import McpServerConfig
from .discovery import SettingSources, claude_home
from .mcp import MCP_JSON, load_mcp_config, parse_server, with_auth_dir
from .mcp_approval import approved_servers
from .plugins import PluginSet, load_plugins
from .project_config import project_config
from .settings import Settings, SettingsProblem, load_settings, queryloop_home
from .trust import is_trusted, untrusted_notice


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
    plugins: PluginSet = field(default_factory=PluginSet)
    """The plugins loaded (their hooks and MCP servers are already in `settings` and
    `mcp_servers`; skills, commands, agents and `bin/` are read from here)."""
    sources: SettingSources = field(default_factory=SettingSources)
    """Which scopes' files the session reads (settings here; memory, agents, skills and
    commands by the parts that find them)."""


def load_workspace(
    cwd: Path,
    *,
    user_home: Path | None = None,
    claude_dir: Path | None = None,
    trust_override: bool | None = None,
    mcp_config_files: Sequence[Path] = (),
    allowed_tools: Sequence[str] = (),
    disallowed_tools: Sequence[str] = (),
    plugin_dirs: Sequence[Path] = (),
    mcp_servers: Mapping[str, object] | None = None,
    add_dirs: Sequence[Path] = (),
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
) -> Workspace:
    """The effective settings, MCP servers and notices for `cwd`, in one call.

    `claude_dir`: Claude Code's user folder (default `$CLAUDE_CONFIG_DIR` or `~/.claude`).
    `trust_override`: True/False force trust for this run (the CLI's `--trust` records it with
    `trust_folder` too); None consults the recorded trusted folders. `mcp_config_files`,
    `allowed_tools` and `disallowed_tools` come from the command line and are always applied;
    so are the program's own `mcp_servers` (the `mcpServers` object of a `.mcp.json`, over
    the files' servers of the same name) and `add_dirs` (added to the settings'
    `additionalDirectories`). `sources` picks the settings scopes read (all by default).

    Fails closed: raises `SettingsError` (a `ConfigError`) when a settings file cannot be read
    or parsed, holds a value of the wrong type or a rule that does not parse, or when an
    `--mcp-config` file (or a trusted project's `.mcp.json`) is missing or invalid. Warnings
    (unknown keys) become `notices`.
    """
    home = user_home or queryloop_home()
    trusted = is_trusted(cwd, home) if trust_override is None else trust_override
    claude = claude_dir or claude_home()
    settings = load_settings(
        cwd, user_home=home, trusted=trusted, claude_dir=claude, sources=sources
    )
    problems: list[SettingsProblem | str] = list(settings.problems)
    ignored = list(settings.ignored)

    errors: list[str] = [str(p) for p in settings.problems if p.is_error]
    project_servers, mcp_problems = load_mcp_config(cwd / MCP_JSON)
    (errors if trusted else problems).extend(mcp_problems)
    servers: dict[str, McpServerConfig] = {}
    held: list[str] = []
    if trusted:
        approved, held = approved_servers(project_servers, settings.mcp_json)
        servers.update(approved)
    elif project_servers:
        ignored.append(f"{cwd / MCP_JSON}: MCP servers " + ", ".join(sorted(project_servers)))
    for extra in mcp_config_files:
        if not extra.is_file():
            errors.append(f"{extra}:1:1: --mcp-config file not found")
            continue
        found, extra_problems = load_mcp_config(extra)
        servers.update(found)
        errors.extend(extra_problems)
    plugins = load_plugins(plugin_dirs, settings.enabled_plugins, home=home, claude=claude)
    errors.extend(plugins.errors)
    servers.update(plugins.mcp_servers())
    for name, raw in (mcp_servers or {}).items():
        server, problem = parse_server(name, raw, source="Agent(mcp_servers=...)", base=cwd)
        if server is not None:
            servers[name] = server
        if problem:
            errors.append(problem)
    if errors:
        raise SettingsError(errors)
    servers, refused = settings.mcp_policy.admitted(with_auth_dir(servers, home))

    cli_rules = RuleSet.from_strings(
        allow=allowed_tools, deny=disallowed_tools, source="command line", root=cwd
    )
    plugin_hooks = plugins.hooks()
    hooks = settings.hooks if settings.hooks_off else settings.hooks.merged(plugin_hooks)
    refused_hooks = settings.http_hooks.refused(hooks)
    hooks = settings.http_hooks.applied(hooks)
    known = settings.additional_directories
    dirs = (*known, *(d for d in add_dirs if d not in known))
    settings = replace(
        settings,
        rules=settings.rules.merged(cli_rules),
        hooks=hooks,
        additional_directories=dirs,
    )
    notices = [str(p) for p in problems]  # `<file>:<line>:<col>: <message>`, one prefix
    notices.extend(f"plugin: {n}" for n in plugins.notices)
    if settings.hooks_off and plugin_hooks.count():
        notices.append(f"plugin: the plugins' hooks do not run ({settings.hooks_off})")
    if held:
        notices.append(
            f"{cwd / MCP_JSON}: MCP servers not started, as the settings say "
            "(disabledMcpjsonServers, or not in enabledMcpjsonServers): " + ", ".join(held)
        )
    if refused_hooks:
        notices.append(
            "http hooks not called, their URLs are not in allowedHttpHookUrls: "
            + "; ".join(refused_hooks)
        )
    if refused:
        notices.append(
            "MCP servers not started, as the settings' policy says: " + "; ".join(refused)
        )
    if not trusted and sources.project:
        holds = project_config(cwd, home)
        if holds or ignored:
            notices.append(untrusted_notice(cwd, holds))
    return Workspace(
        cwd, trusted, settings, servers, tuple(notices), tuple(problems), plugins, sources
    )
