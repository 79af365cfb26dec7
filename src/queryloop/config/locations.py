"""Where the settings files are, lowest precedence first (`settings_paths`): light at
import, so that commands which need one value from them (the session store of `queryloop
sessions`) do not load the rest of the configuration (hooks, permissions, the tools)."""

from __future__ import annotations

import os
from pathlib import Path

from .discovery import CLAUDE_DIR, PROJECT_DIR, Layout, claude_home, claude_managed_dir
from .settings_file import SettingsScope, SettingsSource

MANAGED_SETTINGS = Path("/etc/queryloop/managed-settings.json")
CLAUDE_MANAGED_FILE = "managed-settings.json"
CLAUDE_MANAGED_DROP_INS = "managed-settings.d"


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


def claude_managed_paths() -> list[Path]:
    """Claude Code's managed settings: `managed-settings.json`, then the `*.json` files of
    `managed-settings.d/` in name order, hidden ones left out (code.claude.com/docs/en/settings:
    the drop-ins merge alphabetically on top of the base file)."""
    folder = claude_managed_dir()
    drop_ins = folder / CLAUDE_MANAGED_DROP_INS
    extra = sorted(drop_ins.glob("*.json")) if drop_ins.is_dir() else []
    return [folder / CLAUDE_MANAGED_FILE, *(p for p in extra if not p.name.startswith("."))]


def settings_paths(
    cwd: Path, user_home: Path | None = None, *, claude_dir: Path | None = None
) -> list[SettingsSource]:
    """The settings files that apply in `cwd`, lowest precedence first: at each scope Claude
    Code's file, then queryloop's. `claude_dir` is Claude Code's user folder (default
    `$CLAUDE_CONFIG_DIR` or `~/.claude`)."""
    user, project, local, managed = (
        SettingsScope.USER,
        SettingsScope.PROJECT,
        SettingsScope.LOCAL,
        SettingsScope.MANAGED,
    )
    claude, ours = Layout.CLAUDE, Layout.QUERYLOOP
    return [
        SettingsSource(user, (claude_dir or claude_home()) / "settings.json", claude),
        SettingsSource(user, user_settings_path(user_home), ours),
        SettingsSource(project, cwd / CLAUDE_DIR / "settings.json", claude),
        SettingsSource(project, cwd / PROJECT_DIR / "settings.json", ours),
        SettingsSource(local, cwd / CLAUDE_DIR / "settings.local.json", claude),
        SettingsSource(local, cwd / PROJECT_DIR / "settings.local.json", ours),
        *(SettingsSource(managed, p, claude) for p in claude_managed_paths()),
        SettingsSource(managed, managed_settings_path(), ours),
    ]
