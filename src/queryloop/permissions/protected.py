"""Protected paths: files that decide what the agent may do, or that run code later.

A write to one of them asks in every mode but `bypassPermissions` (acceptEdits included),
whether the file tools or a Bash command make it, and a broad allow rule (`Bash(*)`,
`Edit(**)`) never covers it: only an allow rule that names the path does (see
`permissions.checker`, docs/settings.md "Protected paths"). One prompt injection in a file the
agent reads must not be able to remove every deny rule for the next session, add an MCP
server, or plant a git hook that runs the next time the user commits.

The set is computed once per session from the working folders and the homes, as absolute
paths (the sandbox mounts `entries` read-only). Claude Code's list is the model
(code.claude.com/docs/en/permission-modes#protected-paths, quoted in
anthropics/claude-code#64639): `.git`, `.vscode`, `.idea`, `.husky`, `.cargo`, `.claude`,
`.gitconfig`, `.gitmodules`, shell start-up files, `.mcp.json`, `.claude.json`. Unlike Claude
Code we also protect the agent, skill and command folders (they are instructions a later
session follows); the narrow way through asked for in anthropics/claude-code#36155 is an
allow rule that names the folder, `Edit(.queryloop/skills/**)`.

This module is below `config` in the layers: it receives the homes and the managed settings
path from its caller and knows the file names, not how they are read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_DIRS = (".queryloop", ".claude")
"""queryloop's own project folder and Claude Code's (read beside it)."""
SETTINGS_FILES = ("settings.json", "settings.local.json")
CONFIG_FOLDERS = ("agents", "skills", "commands", "hooks")
MEMORY_FILES = ("QUERYLOOP.md", "AGENTS.md", "CLAUDE.md", "CLAUDE.local.md")
"""Memory files: instructions every later session reads (nested ones when touched)."""

_PROJECT_TREES = (
    (".git", "git hooks and config"),
    (".vscode", "editor tasks and settings that run code"),
    (".idea", "editor run configurations"),
    (".husky", "git hooks (husky)"),
)
_PROJECT_FILES = (
    (".mcp.json", "MCP servers"),
    (".gitmodules", "git submodules"),
    (".envrc", "direnv start-up script"),
)
_SHELL_STARTUP = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".kshrc",
    ".mkshrc",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".xprofile",
    ".xsession",
)
_HOME_TREES = (
    (".bashrc.d", "shell start-up files"),
    (".config/fish", "shell start-up files"),
    (".config/git", "git config"),
    (".config/autostart", "programs run at login"),
    (".config/systemd/user", "services run at login"),
    (".ssh", "ssh keys and config"),
    (".claude", "Claude Code settings"),
)
_HOME_FILES = (
    (".gitconfig", "git config"),
    (".claude.json", "Claude Code settings and MCP servers"),
)


@dataclass(frozen=True, slots=True)
class ProtectedEntry:
    """One protected file, or folder (everything below it is protected too)."""

    path: Path
    """Absolute and normalised (symlinks not resolved)."""
    is_dir: bool
    why: str
    """What the path is, for messages: "queryloop settings", "git hooks and config", …"""


@dataclass(frozen=True)
class ProtectedPaths:
    """The protected entries of a session, and the lookup the checker uses."""

    entries: tuple[ProtectedEntry, ...]
    memory_roots: tuple[Path, ...] = ()
    """Folders in which any file named like a memory file is protected (the working
    folders: nested memory files are read when the agent touches their folder)."""
    _forms: tuple[tuple[str, str, ProtectedEntry], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        forms = [
            (_literal(entry.path), os.path.realpath(entry.path), entry) for entry in self.entries
        ]
        object.__setattr__(self, "_forms", tuple(forms))

    def find(self, path: Path | str) -> ProtectedEntry | None:
        """The entry protecting `path`, compared as written (`..` folded) and with every
        symlink resolved: a link in the project pointing into `.git/hooks` is caught, and
        so is a protected path reached through a symlinked folder."""
        literal = _literal(path)
        real = os.path.realpath(literal)
        for entry_literal, entry_real, entry in self._forms:
            for candidate in (literal, real):
                for base in (entry_literal, entry_real):
                    if _covers(base, candidate, entry.is_dir):
                        return entry
        return self._memory(literal, real)

    def inside(self, folder: Path | str) -> ProtectedEntry | None:
        """An entry at or below `folder` (deleting, moving or extracting into the folder
        changes it), or one protecting the folder itself."""
        literal = _literal(folder)
        real = os.path.realpath(literal)
        for entry_literal, entry_real, entry in self._forms:
            for candidate in (literal, real):
                for base in (entry_literal, entry_real):
                    if _covers(candidate, base, True) or _covers(base, candidate, entry.is_dir):
                        return entry
        return self._memory(literal, real)

    def _memory(self, literal: str, real: str) -> ProtectedEntry | None:
        for candidate in (literal, real):
            if os.path.basename(candidate) not in MEMORY_FILES:
                continue
            for root in self.memory_roots:
                if _covers(_literal(root), candidate, True) or _covers(
                    os.path.realpath(root), candidate, True
                ):
                    return ProtectedEntry(Path(candidate), False, "memory file")
        return None


def protected_paths(
    working_dirs: Sequence[Path],
    *,
    home: Path,
    config_home: Path,
    managed_settings: Path,
) -> ProtectedPaths:
    """The protected set for a session in `working_dirs` (its start folder, cwd and the
    additional directories), the user's `home`, the queryloop home `config_home`
    (`$QUERYLOOP_HOME`) and the managed settings file."""
    entries: dict[Path, ProtectedEntry] = {}

    def add(path: Path, is_dir: bool, why: str) -> None:
        path = Path(_literal(path))
        entries.setdefault(path, ProtectedEntry(path, is_dir, why))

    for folder in working_dirs:
        for entry in _project_entries(Path(folder)):
            add(entry.path, entry.is_dir, entry.why)
    for entry in _home_entries(home):
        add(entry.path, entry.is_dir, entry.why)
    for entry in _queryloop_home_entries(config_home):
        add(entry.path, entry.is_dir, entry.why)
    add(managed_settings, False, "managed settings")
    roots = tuple(dict.fromkeys(Path(_literal(d)) for d in working_dirs))
    return ProtectedPaths(tuple(entries.values()), roots)


def _project_entries(folder: Path) -> Iterable[ProtectedEntry]:
    for name in PROJECT_DIRS:
        owner = "queryloop" if name == ".queryloop" else "Claude Code"
        base = folder / name
        for settings in SETTINGS_FILES:
            yield ProtectedEntry(base / settings, False, f"{owner} settings")
        for sub in CONFIG_FOLDERS:
            yield ProtectedEntry(base / sub, True, f"{owner} {sub.rstrip('s')} files")
        memory = "QUERYLOOP.md" if name == ".queryloop" else "CLAUDE.md"
        yield ProtectedEntry(base / memory, False, "memory file")
    for memory in MEMORY_FILES:
        yield ProtectedEntry(folder / memory, False, "memory file")
    for name, why in _PROJECT_TREES:
        yield ProtectedEntry(folder / name, True, why)
    for name, why in _PROJECT_FILES:
        yield ProtectedEntry(folder / name, False, why)
    yield from _git_dirs(folder)


def _git_dirs(folder: Path) -> Iterable[ProtectedEntry]:
    """A worktree's or submodule's `.git` is a file naming the real git folder: protect that
    folder too, and the common folder its hooks and config live in."""
    dot_git = folder / ".git"
    try:
        if not dot_git.is_file():
            return
        first = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[:1]
    except OSError:
        return
    if not first or not first[0].startswith("gitdir:"):
        return
    gitdir = Path(first[0][len("gitdir:") :].strip())
    gitdir = gitdir if gitdir.is_absolute() else folder / gitdir
    yield ProtectedEntry(gitdir, True, "git hooks and config")
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return
    common_dir = Path(common) if Path(common).is_absolute() else gitdir / common
    yield ProtectedEntry(common_dir / "hooks", True, "git hooks and config")
    yield ProtectedEntry(common_dir / "config", False, "git hooks and config")


def _home_entries(home: Path) -> Iterable[ProtectedEntry]:
    for name in _SHELL_STARTUP:
        yield ProtectedEntry(home / name, False, "shell start-up file")
    for name, why in _HOME_TREES:
        yield ProtectedEntry(home / name, True, why)
    for name, why in _HOME_FILES:
        yield ProtectedEntry(home / name, False, why)


def _queryloop_home_entries(config_home: Path) -> Iterable[ProtectedEntry]:
    for settings in SETTINGS_FILES:
        yield ProtectedEntry(config_home / settings, False, "queryloop user settings")
    for sub in CONFIG_FOLDERS:
        yield ProtectedEntry(config_home / sub, True, f"queryloop user {sub.rstrip('s')} files")
    for memory in MEMORY_FILES:
        yield ProtectedEntry(config_home / memory, False, "memory file")
    yield ProtectedEntry(config_home / "plugins", True, "queryloop plugins")


def _literal(path: Path | str) -> str:
    return os.path.normpath(os.path.abspath(os.path.expanduser(os.fspath(path))))


def _covers(base: str, path: str, is_dir: bool) -> bool:
    if path == base:
        return True
    return is_dir and path.startswith(base.rstrip("/") + "/")
