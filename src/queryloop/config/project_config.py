"""What a project folder would run or change once trusted, counted: for the trust question
and the one notice an untrusted folder gets.

Claude Code asks "Do you trust the files in this folder?" the first time it starts in a
folder, and names the files that allow execution ("Execution allowed by: •
.claude/settings.local.json", anthropics/claude-code#9256); until it is trusted, the
project's hooks do not run ("Skipping SessionStart:startup hook execution - workspace trust
not accepted", anthropics/claude-code#10409). queryloop asks the same way and says what the
folder holds in numbers — hooks, MCP servers, allow and ask rules, agents, commands, skills,
rule files — not every hook's script: `queryloop trust --show` lists them in full.

The files are read here as plain JSON, only to count: whether they are valid is the
settings loader's to say (`config.settings`), when the session starts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .discovery import (
    AGENTS_DIR,
    CLAUDE_DIR,
    COMMANDS_DIR,
    PROJECT_DIR,
    SKILLS_DIR,
    config_folders,
    markdown_files,
)

SETTINGS_FILES = (
    f"{CLAUDE_DIR}/settings.json",
    f"{CLAUDE_DIR}/settings.local.json",
    f"{PROJECT_DIR}/settings.json",
    f"{PROJECT_DIR}/settings.local.json",
)
"""The project's settings files, relative to the folder (Claude Code's layout first)."""
MCP_FILE = ".mcp.json"
WIDENING_KEYS = ("env", "enabledPlugins", "compaction", "cacheTtl", "allowedHttpHookUrls")
"""Top-level keys an untrusted project's file may not set (besides hooks and rules)."""
WIDENING_PERMISSIONS = ("defaultMode", "additionalDirectories")


@dataclass(frozen=True)
class SettingsCount:
    """One settings file: how many hooks and allow/ask rules, which other keys widen."""

    path: str
    hooks: int = 0
    rules: int = 0
    other: tuple[str, ...] = ()
    unreadable: bool = False

    def describe(self) -> str:
        """`.claude/settings.json (3 hooks, 2 allow/ask rules, env)`."""
        if self.unreadable:
            return f"{self.path} (not valid JSON)"
        parts = [
            *([_count(self.hooks, "hook")] if self.hooks else []),
            *([_count(self.rules, "allow/ask rule")] if self.rules else []),
            *self.other,
        ]
        return f"{self.path} ({', '.join(parts)})" if parts else ""


@dataclass(frozen=True)
class ProjectConfig:
    """What a folder holds that counts only once it is trusted."""

    folder: Path
    settings: tuple[SettingsCount, ...] = ()
    servers: tuple[str, ...] = ()
    """The MCP servers of its `.mcp.json`."""
    agents: int = 0
    commands: int = 0
    skills: int = 0
    rules: int = 0
    """Rule files (`.claude/rules/*.md`): instructions for the model."""

    def __bool__(self) -> bool:
        return bool(self.parts())

    @property
    def hooks(self) -> int:
        """Hooks in all its settings files (each runs a command)."""
        return sum(s.hooks for s in self.settings)

    @property
    def files(self) -> list[str]:
        """The configuration files and folders found, relative to the folder."""
        found = [s.path for s in self.settings]
        return [*found, MCP_FILE] if self.servers else found

    def parts(self) -> list[str]:
        """One phrase per thing found (`.mcp.json (2 MCP servers: db, web)`, `4 agents`)."""
        parts = [text for s in self.settings if (text := s.describe())]
        if self.servers:
            names = ", ".join(self.servers)
            parts.append(f"{MCP_FILE} ({_count(len(self.servers), 'MCP server')}: {names})")
        for number, what in (
            (self.agents, "agent"),
            (self.commands, "command"),
            (self.skills, "skill"),
            (self.rules, "rule file"),
        ):
            if number:
                parts.append(_count(number, what))
        return parts

    def summary(self) -> str:
        """Everything found, in one line."""
        return "; ".join(self.parts())


def project_config(cwd: Path, user_home: Path) -> ProjectConfig:
    """Count what `cwd`'s project files hold (settings at `cwd`, as they are read; agents,
    commands, skills and rules from every project folder up to the repository root)."""
    settings = tuple(
        count for name in SETTINGS_FILES if (count := _settings(cwd, name)) is not None
    )

    def untrusted(kind: str) -> list[Path]:
        folders = config_folders(cwd, kind, user_home=user_home, trusted=False)
        return [f.path for f in folders.untrusted]

    return ProjectConfig(
        cwd,
        settings,
        _servers(cwd / MCP_FILE),
        agents=sum(len(markdown_files(f)) for f in untrusted(AGENTS_DIR)),
        commands=sum(len(markdown_files(f)) for f in untrusted(COMMANDS_DIR)),
        skills=sum(len(list(f.glob("*/SKILL.md"))) for f in untrusted(SKILLS_DIR)),
        rules=sum(len(markdown_files(f)) for f in untrusted("rules")),
    )


def _settings(cwd: Path, name: str) -> SettingsCount | None:
    path = cwd / name
    if not path.is_file():
        return None
    data = _json(path)
    if data is None:
        return SettingsCount(name, unreadable=True)
    hooks = data.get("hooks")
    permissions = data.get("permissions")
    permissions = permissions if isinstance(permissions, dict) else {}
    return SettingsCount(
        name,
        hooks=_hook_count(hooks) if isinstance(hooks, dict) else 0,
        rules=sum(
            len(rules)
            for behavior in ("allow", "ask")
            if isinstance(rules := permissions.get(behavior), list)
        ),
        other=(
            *(key for key in WIDENING_KEYS if data.get(key)),
            *(key for key in WIDENING_PERMISSIONS if permissions.get(key)),
        ),
    )


def _hook_count(hooks: dict[str, Any]) -> int:
    """Claude Code's shape: `{event: [{"matcher": ..., "hooks": [hook, ...]}, ...]}`."""
    return sum(
        len(group["hooks"])
        for groups in hooks.values()
        if isinstance(groups, list)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
    )


def _servers(path: Path) -> tuple[str, ...]:
    if not path.is_file():
        return ()
    data = _json(path)
    servers = data.get("mcpServers") if data is not None else None
    return tuple(sorted(servers)) if isinstance(servers, dict) else ()


def _json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _count(number: int, what: str) -> str:
    return f"{number} {what}{'s' if number != 1 else ''}"
