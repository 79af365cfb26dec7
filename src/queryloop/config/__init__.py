"""queryloop.config: what is read from the files around a working folder, before a run starts.

- `settings`: the settings files at every scope, merged, failing closed (docs/settings.md);
- `trust`: which folders the user trusts, recorded in the user settings file;
- `mcp`: MCP server configuration (`.mcp.json`, `--mcp-config`) into `McpServerConfig`s;
- `workspace`: `load_workspace`, all of the above for one folder in one call;
- `discovery`: which configuration folders (agents, skills, commands, …) and files exist at
  which scope, in which layout (queryloop's or Claude Code's), under which trust;
- `memory`: the memory files (QUERYLOOP.md, AGENTS.md, CLAUDE.md, CLAUDE.local.md, with their
  `@path` imports), found and read, and the once-per-session context (`SessionContext`);
- `claude_settings`: how Claude Code's settings keys and values are read (leniency);
- `keys`: the table of settings keys, one entry per setting (`settings_file` below it reads
  one file; `merge` walks the table; `permission_settings`, `hook_settings` are two of its
  rules); `mcp_approval`: which `.mcp.json` servers start;
  `mcp_policy`: which MCP servers may start at all (`allowedMcpServers`, `deniedMcpServers`);
  `url_patterns`: the `*` URL patterns those and `allowedHttpHookUrls` use.

The layer sits above permissions, hooks, context and tools, whose values it builds (rules,
hook matchers, memory files, server configs), and below the packages that use them (agents,
skills, agent, cli); see docs/architecture.md. Names load on first use: `config.trust` is
imported early by the CLI and must not pay for the rest.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..tools.mcp_server import McpServerConfig
    from .discovery import (
        CLAUDE_DIR,
        PROJECT_DIR,
        ConfigFolder,
        FileScope,
        FolderSet,
        FoundFile,
        Layout,
        agent_files,
        claude_home,
        claude_managed_dir,
        config_folders,
        skill_files,
    )
    from .mcp import MCP_JSON, expand_vars, load_mcp_config, parse_server
    from .mcp_approval import McpJsonApproval, approved_servers
    from .memory import SessionContext, discover_memory_files, get_user_context, memory_folders
    from .settings import (
        Settings,
        SettingsFile,
        SettingsProblem,
        SettingsScope,
        SettingsSource,
        Severity,
        load_settings,
        queryloop_home,
        read_settings_file,
        settings_paths,
        user_settings_path,
    )
    from .trust import TRUST_HINT, is_trusted, trust_folder, trusted_folders
    from .workspace import SettingsError, Workspace, load_workspace

_LAZY = {
    "McpServerConfig": "..tools.mcp_server",
    **dict.fromkeys(
        (
            "CLAUDE_DIR",
            "PROJECT_DIR",
            "ConfigFolder",
            "FileScope",
            "FolderSet",
            "FoundFile",
            "Layout",
            "agent_files",
            "claude_home",
            "claude_managed_dir",
            "config_folders",
            "skill_files",
        ),
        ".discovery",
    ),
    **dict.fromkeys(("MCP_JSON", "expand_vars", "load_mcp_config", "parse_server"), ".mcp"),
    **dict.fromkeys(("McpJsonApproval", "approved_servers"), ".mcp_approval"),
    **dict.fromkeys(
        ("SessionContext", "discover_memory_files", "get_user_context", "memory_folders"),
        ".memory",
    ),
    **dict.fromkeys(
        (
            "Settings",
            "SettingsFile",
            "SettingsProblem",
            "SettingsScope",
            "SettingsSource",
            "Severity",
            "load_settings",
            "queryloop_home",
            "read_settings_file",
            "settings_paths",
            "user_settings_path",
        ),
        ".settings",
    ),
    **dict.fromkeys(("TRUST_HINT", "is_trusted", "trust_folder", "trusted_folders"), ".trust"),
    **dict.fromkeys(("SettingsError", "Workspace", "load_workspace"), ".workspace"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CLAUDE_DIR",
    "MCP_JSON",
    "PROJECT_DIR",
    "TRUST_HINT",
    "ConfigFolder",
    "FileScope",
    "FolderSet",
    "FoundFile",
    "Layout",
    "McpJsonApproval",
    "McpServerConfig",
    "SessionContext",
    "Settings",
    "SettingsError",
    "SettingsFile",
    "SettingsProblem",
    "SettingsScope",
    "SettingsSource",
    "Severity",
    "Workspace",
    "agent_files",
    "approved_servers",
    "claude_home",
    "claude_managed_dir",
    "config_folders",
    "discover_memory_files",
    "expand_vars",
    "get_user_context",
    "is_trusted",
    "load_mcp_config",
    "load_settings",
    "load_workspace",
    "memory_folders",
    "parse_server",
    "queryloop_home",
    "read_settings_file",
    "settings_paths",
    "skill_files",
    "trust_folder",
    "trusted_folders",
    "user_settings_path",
]
