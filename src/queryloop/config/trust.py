"""Workspace trust: a stranger's repository must not run its code on our machine.

A project's own files can widen what the agent may do: allow/ask rules, hooks (shell
commands), `env`, `defaultMode`, additional directories and MCP servers (processes). Until the
user trusts the folder once, those are ignored and a notice lists them; the project's deny
rules still apply, because they only ever narrow. `config.workspace.load_workspace` applies
this to the settings and MCP files of one folder.

Trust is recorded in the user settings file, `$QUERYLOOP_HOME/settings.json`, as
`"trustedFolders": ["/abs/path", ...]`. Trusting a folder trusts its subfolders. User settings
and what the user passes on the command line (`--mcp-config`, `--allowed-tools`) are always
trusted.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from ..errors import ConfigError
from ..permissions.context import TRUST_HINT as TRUST_HINT
from ..permissions.paths import real_path
from .locations import user_settings_path
from .project_config import ProjectConfig
from .settings_file import read_settings_file

SHOW_COMMAND = "queryloop trust --show"
"""Lists in full what an untrusted folder's files hold (`cli.commands.show_trust`)."""


def untrusted_notice(cwd: Path, found: ProjectConfig) -> str:
    """The one notice of an untrusted folder: what it holds, counted, and how to see it all
    and to trust it (never every hook's script)."""
    held = found.summary() or "project settings"
    return (
        f"{cwd} is not trusted, so its project configuration is ignored (its deny rules "
        f"still apply): {held}. `{SHOW_COMMAND}` lists it all; {TRUST_HINT}"
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
