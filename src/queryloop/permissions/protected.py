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
    (".cargo", "cargo config (runners, build flags)"),
)
_PROJECT_FILES = (
    (".mcp.json", "MCP servers"),
    (".gitmodules", "git submodules"),
    (".envrc", "direnv start-up script"),
    (".pre-commit-config.yaml", "git hooks (pre-commit)"),
)
_SHELL_STARTUP = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".bash_aliases",
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
    ".xsessionrc",
    ".xinitrc",
    ".pam_environment",
)
_HOME_TREES = (
    (".bashrc.d", "shell start-up files"),
    (".config/fish", "shell start-up files"),
    (".config/environment.d", "environment set at login"),
    (".config/git", "git config"),
    (".config/autostart", "programs run at login"),
    (".config/systemd/user", "services run at login"),
    (".ssh", "ssh keys and config"),
    (".claude", "Claude Code settings, memory, agents, commands, skills and plugins"),
    (".local/bin", "programs on PATH (run in place of the system's)"),
    ("bin", "programs on PATH (run in place of the system's)"),
)
_HOME_FILES = (
    (".gitconfig", "git config"),
    (".claude.json", "Claude Code settings and MCP servers"),
    (".npmrc", "npm config (script shell, node options)"),
    (".ripgreprc", "ripgrep config (--pre runs a program)"),
    (".cargo/config", "cargo config (runners, build flags)"),
    (".cargo/config.toml", "cargo config (runners, build flags)"),
)
_SYSTEM = (
    ("/etc/profile", False, "shell start-up file"),
    ("/etc/profile.d", True, "shell start-up files"),
    ("/etc/bash.bashrc", False, "shell start-up file"),
    ("/etc/bashrc", False, "shell start-up file"),
    ("/etc/zsh", True, "shell start-up files"),
    ("/etc/environment", False, "environment set at login"),
    ("/etc/ld.so.preload", False, "libraries loaded into every program"),
    ("/etc/gitconfig", False, "git config"),
    ("/etc/crontab", False, "scheduled jobs"),
    ("/etc/cron.d", True, "scheduled jobs"),
    ("/var/spool/cron", True, "scheduled jobs (crontab)"),
    ("/etc/sudoers", False, "sudo rules"),
    ("/etc/sudoers.d", True, "sudo rules"),
    ("/etc/systemd/system", True, "services run at boot"),
)
"""System files that run code for every user (an agent running as root can write them)."""

CRONTABS = Path("/var/spool/cron/crontabs")
"""Where `crontab` installs a table (`shell_writers` names it as the write target)."""
ATJOBS = Path("/var/spool/cron/atjobs")
"""Where `at` queues a job."""


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
    """The protected entries of a session, and the lookup the checker uses.

    Besides `entries`, two rules hold by name: below a working folder, every folder's
    project layout is protected as the working folder's is (`src/.mcp.json`,
    `pkg/.queryloop/settings.json`, `docs/CLAUDE.md`: a session started there, or one that
    touches the folder, reads them), and a `.git` folder anywhere holds hooks and config
    that run when git runs there. Names compare case-insensitively (macOS and Windows
    filesystems are: `.QUERYLOOP/settings.json` is the settings file there)."""

    entries: tuple[ProtectedEntry, ...]
    roots: tuple[Path, ...] = ()
    """The working folders: below them, every folder's project layout is protected."""
    _forms: tuple[tuple[str, str, ProtectedEntry], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        forms = [
            (_fold(_literal(entry.path)), _fold(os.path.realpath(entry.path)), entry)
            for entry in self.entries
        ]
        object.__setattr__(self, "_forms", tuple(forms))

    def find(self, path: Path | str) -> ProtectedEntry | None:
        """The entry protecting `path`, compared as written (`..` folded) and with every
        symlink resolved: a link in the project pointing into `.git/hooks` is caught, and
        so is a protected path reached through a symlinked folder."""
        candidates = _candidates(path)
        for entry_literal, entry_real, entry in self._forms:
            for candidate in candidates:
                for base in (entry_literal, entry_real):
                    if _covers(base, candidate, entry.is_dir):
                        return entry
        return self._by_name(candidates, below=False)

    def inside(self, folder: Path | str) -> ProtectedEntry | None:
        """An entry at or below `folder` (deleting, moving or extracting into the folder
        changes it), or one protecting the folder itself."""
        candidates = _candidates(folder)
        for entry_literal, entry_real, entry in self._forms:
            for candidate in candidates:
                for base in (entry_literal, entry_real):
                    if _covers(candidate, base, True) or _covers(base, candidate, entry.is_dir):
                        return entry
        return self._by_name(candidates, below=True)

    def layout_below(self, folder: Path | str) -> list[tuple[str, bool]]:
        """(path, is_dir) of the project layout any folder at or below `folder` may hold,
        placed in `folder` (empty when `folder` is not in a working folder)."""
        literal = _literal(folder)
        if not any(_covers(_fold(_literal(r)), _fold(literal), True) for r in self.roots):
            return []
        return [(os.path.join(literal, *shape), is_dir) for shape, is_dir, _ in _SHAPES]

    def _by_name(self, candidates: tuple[str, ...], *, below: bool) -> ProtectedEntry | None:
        """The rules by name: a project layout in a folder below a working folder, and a
        `.git` folder anywhere (`below`: or a protected path below the folder)."""
        for candidate in candidates:
            parts = candidate.split("/")
            if GIT_DIR in parts:
                cut = parts.index(GIT_DIR) + 1
                return ProtectedEntry(Path("/".join(parts[:cut]) or "/"), True, _GIT_WHY)
            for root in self.roots:
                for base in {_fold(_literal(root)), _fold(os.path.realpath(root))}:
                    if _covers(base, candidate, True):
                        found = _nested(base, candidate, below=below)
                        if found is not None:
                            return found
        return None


def protected_paths(
    working_dirs: Sequence[Path],
    *,
    home: Path,
    config_home: Path,
    managed_settings: Path,
    extra: Sequence[ProtectedEntry] = (),
) -> ProtectedPaths:
    """The protected set for a session in `working_dirs` (its start folder, cwd and the
    additional directories), the user's `home`, the queryloop home `config_home`
    (`$QUERYLOOP_HOME`), the managed settings file and `extra` entries the configuration
    layer reads besides (Claude Code's user folder where `$CLAUDE_CONFIG_DIR` moves it, its
    managed folder: `config.discovery.claude_protected_entries`)."""
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
    for path, is_dir, why in _SYSTEM:
        add(Path(path), is_dir, why)
    for entry in extra:
        add(entry.path, entry.is_dir, entry.why)
    roots = tuple(dict.fromkeys(Path(_literal(d)) for d in working_dirs))
    return ProtectedPaths(tuple(entries.values()), roots)


def _project_entries(folder: Path) -> Iterable[ProtectedEntry]:
    yield from _project_layout(folder)
    yield from _git_dirs(folder)


def _project_layout(folder: Path) -> Iterable[ProtectedEntry]:
    """The protected names of a project folder (the same in every folder below it)."""
    for name in PROJECT_DIRS:
        owner = "queryloop" if name == ".queryloop" else "Claude Code"
        base = folder / name
        for settings in SETTINGS_FILES:
            yield ProtectedEntry(base / settings, False, f"{owner} settings")
        for sub in CONFIG_FOLDERS:
            yield ProtectedEntry(base / sub, True, f"{owner} {sub.rstrip('s')} files")
        memory = "QUERYLOOP.md" if name == ".queryloop" else "CLAUDE.md"
        yield ProtectedEntry(base / memory, False, "memory file")
        # the rest of the folder too, as Claude Code guards all of `.claude`: what a later
        # version or a plugin reads there (output styles, status-line scripts, plugins)
        yield ProtectedEntry(base, True, f"{owner}'s project folder")
    for memory in MEMORY_FILES:
        yield ProtectedEntry(folder / memory, False, "memory file")
    for name, why in _PROJECT_TREES:
        yield ProtectedEntry(folder / name, True, why)
    for name, why in _PROJECT_FILES:
        yield ProtectedEntry(folder / name, False, why)


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


def _fold(path: str) -> str:
    return path.casefold()


def _candidates(path: Path | str) -> tuple[str, ...]:
    """`path` as written (`..` folded) and with its symlinks resolved, case-folded."""
    literal = _literal(path)
    return tuple(dict.fromkeys((_fold(literal), _fold(os.path.realpath(literal)))))


def _covers(base: str, path: str, is_dir: bool) -> bool:
    if path == base:
        return True
    return is_dir and path.startswith(base.rstrip("/") + "/")


GIT_DIR = ".git"
_GIT_WHY = "git hooks and config"


def _shapes() -> tuple[tuple[tuple[str, ...], bool, str], ...]:
    """A working folder's project entries as relative parts, for the rule that applies
    them to every folder below it."""
    return tuple(
        (entry.path.parts[1:], entry.is_dir, entry.why) for entry in _project_layout(Path("/"))
    )


def _nested(root: str, candidate: str, *, below: bool) -> ProtectedEntry | None:
    """The project entry of some folder between `root` and `candidate` that covers it
    (`below`: or that lies below `candidate`, a folder). Both are case-folded."""
    parts = candidate[len(root) :].strip("/").split("/") if candidate != root else []
    for start in range(len(parts)):
        rest = tuple(parts[start:])
        for shape, is_dir, why in _FOLDED:
            covered = rest == shape or (is_dir and rest[: len(shape)] == shape)
            if covered or (below and shape[: len(rest)] == rest):
                path = Path(root, *parts[:start], *shape)
                return ProtectedEntry(path, is_dir, why)
    return None


_SHAPES = _shapes()
_FOLDED = tuple((tuple(_fold(p) for p in shape), d, w) for shape, d, w in _SHAPES)
