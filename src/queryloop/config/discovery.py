"""Which configuration folders and files exist, at which scope, in which layout, under which trust.

queryloop reads two layouts side by side (docs/settings.md, "Two layouts"):

| scope   | queryloop                      | Claude Code                                  |
|---------|--------------------------------|----------------------------------------------|
| user    | `$QUERYLOOP_HOME` (`~/.queryloop`) | `$CLAUDE_CONFIG_DIR` (`~/.claude`)       |
| project | `<dir>/.queryloop/`            | `<dir>/.claude/`                             |
| managed | `/etc/queryloop/`              | `/etc/claude-code/`                          |

Each holds the same kinds of folders (`agents/`, `skills/`, `commands/`). A project's folders
are instructions from whoever wrote the repository, so they count only in a trusted folder
(`config.trust`), in both layouts alike. At one scope, queryloop's folder is the more specific
of the two: where both define the same name, queryloop's wins.

The project's folders are those of every `<dir>` from the repository root (the git root) down
to `cwd` (`project_folders`), as Claude Code finds project subagents ("discovered by walking
up from the current working directory, so every `.claude/agents/` between there and the
repository root is scanned", code.claude.com/docs/en/sub-agents) and skills and commands
(anthropics/claude-code#10443); where two define one name, the one closest to `cwd` wins
(Claude Code 2.1.178). Outside a repository only `cwd` is the project. Settings files are
read at `cwd` only, as Claude Code reads them (anthropics/claude-code#86187).

Commands are Markdown files under a `commands/` folder of any of these, subfolders naming a
namespace (`command_files`, read by `skills.loader`).

This module only finds folders and files. Reading and parsing them stays with the packages
that own the formats (`agents.definitions`, `skills.loader`, commands, plugins), which sit
above this layer and call it. Of queryloop it imports only `find_git_root` (the one
definition of "the repository around a folder", which memory uses too), and that only when
`project_folders` runs: `agents.definitions` is imported at start-up, and `queryloop
sessions` reads the sessionStore setting through this module without loading the tools.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol, TypeVar

PROJECT_DIR = ".queryloop"
"""The project's own folder of queryloop files (settings, agents, skills) inside `cwd`."""
CLAUDE_DIR = ".claude"
"""Claude Code's project folder inside `cwd` (and its user folder's default name in `~`)."""
CLAUDE_MANAGED_DIR = Path("/etc/claude-code")
"""Claude Code's managed folder on Linux (managed-settings.json, managed-settings.d/,
CLAUDE.md): code.claude.com/docs/en/settings, code.claude.com/docs/en/memory."""
AGENTS_DIR = "agents"
PROJECT_AGENTS_DIR = Path(PROJECT_DIR) / AGENTS_DIR
SKILLS_DIR = "skills"
PROJECT_SKILLS_DIR = Path(PROJECT_DIR) / SKILLS_DIR
SKILL_FILE = "SKILL.md"


class FileScope(StrEnum):
    """Where a found file lives: the user's home folder or the project."""

    USER = "user"
    PROJECT = "project"
    PLUGIN = "plugin"


class _HasScope(Protocol):
    @property
    def scope(self) -> FileScope: ...


_Scoped = TypeVar("_Scoped", bound=_HasScope)


@dataclass(frozen=True, slots=True)
class SettingSources:
    """Which of the user's and the project's files a session reads: Claude Code's
    `--setting-sources` (the Claude Agent SDK's `setting_sources`). `user`: the user's
    settings file, memory, agents, skills and commands; `project`: the project's settings,
    memory (at start and in subfolders later), agents, skills and commands; `local`: the
    project's `settings.local.json`. All by default; the managed settings are always read,
    and a project's files still count only in a trusted folder."""

    user: bool = True
    project: bool = True
    local: bool = True

    @classmethod
    def of(cls, names: Iterable[str] | None) -> SettingSources:
        """The sources named (None: all); an unknown name is a ValueError."""
        if names is None:
            return cls()
        chosen = set(names)
        unknown = sorted(chosen - {"user", "project", "local"})
        if unknown:
            raise ValueError(
                f"unknown setting source(s) {', '.join(unknown)}; use user, project, local"
            )
        return cls("user" in chosen, "project" in chosen, "local" in chosen)

    def reads(self, scope: str) -> bool:
        """Whether files of this scope (`user`, `project`, `local`; anything else, such
        as `managed`: always) are read."""
        return {"user": self.user, "project": self.project, "local": self.local}.get(scope, True)

    def keep(self, found: Iterable[_Scoped]) -> list[_Scoped]:
        """The found files whose scope is read."""
        return [f for f in found if self.reads(f.scope.value)]


class Layout(StrEnum):
    """Whose layout a file or folder belongs to."""

    QUERYLOOP = "queryloop"
    CLAUDE = "claude"


@dataclass(frozen=True, slots=True)
class FoundFile:
    """One file that exists, the scope it was found at, and whose layout it is in."""

    path: Path
    scope: FileScope
    layout: Layout = Layout.QUERYLOOP


@dataclass(frozen=True, slots=True)
class ConfigFolder:
    """One folder of a kind (`agents`, `skills`, `commands`, …) at one scope and layout."""

    path: Path
    scope: FileScope
    layout: Layout
    depth: int = 0
    """A project folder's distance from `cwd` (0: `cwd`'s own; the closer one wins)."""


@dataclass(frozen=True, slots=True)
class FolderSet:
    """The folders of one kind that count, lowest precedence first, and what was left out."""

    folders: tuple[ConfigFolder, ...]
    untrusted: tuple[ConfigFolder, ...] = ()
    """A project's folders that exist but were not used: the project is not trusted."""


@dataclass(frozen=True, slots=True)
class FoundFiles:
    """Files of one kind in the order their kind's precedence reads them, and notices."""

    files: tuple[FoundFile, ...]
    notices: tuple[str, ...] = ()
    """What was not used and why (an untrusted project's files)."""


def claude_home() -> Path:
    """Claude Code's user folder: `$CLAUDE_CONFIG_DIR`, or `~/.claude`."""
    value = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() if value else Path.home() / CLAUDE_DIR


def claude_managed_dir() -> Path:
    """Claude Code's managed folder: `/etc/claude-code` (`$QUERYLOOP_CLAUDE_MANAGED_DIR`
    moves it, for tests and unusual installs)."""
    value = os.environ.get("QUERYLOOP_CLAUDE_MANAGED_DIR")
    return Path(value).expanduser() if value else CLAUDE_MANAGED_DIR


def config_folders(
    cwd: Path, kind: str, *, user_home: Path, trusted: bool, claude_dir: Path | None = None
) -> FolderSet:
    """The `kind` folders (`agents`, `skills`, `commands`, …) that exist, lowest precedence
    first: Claude Code's user folder, queryloop's, then (when `trusted`) each project folder's
    (`project_folders`, the outermost first), Claude Code's before queryloop's. `user_home` is
    `$QUERYLOOP_HOME`; `claude_dir` is Claude Code's user folder (default `claude_home()`)."""
    user = [
        ConfigFolder((claude_dir or claude_home()) / kind, FileScope.USER, Layout.CLAUDE),
        ConfigFolder(user_home / kind, FileScope.USER, Layout.QUERYLOOP),
    ]
    folders = project_folders(cwd)
    project = [
        ConfigFolder(folder / name / kind, FileScope.PROJECT, layout, len(folders) - 1 - i)
        for i, folder in enumerate(folders)
        for name, layout in ((CLAUDE_DIR, Layout.CLAUDE), (PROJECT_DIR, Layout.QUERYLOOP))
    ]
    mine = {f.path for f in user}  # a home folder inside a repository is still the user's
    candidates = [*user, *(f for f in project if f.path not in mine)]
    found = [f for f in candidates if f.path.is_dir()]
    if trusted:
        return FolderSet(tuple(found))
    return FolderSet(
        tuple(f for f in found if f.scope is FileScope.USER),
        tuple(f for f in found if f.scope is FileScope.PROJECT),
    )


def project_folders(cwd: Path) -> list[Path]:
    """The folders whose `.claude/` and `.queryloop/` are the project's, outermost first:
    each from the repository root (the git root) down to `cwd`; outside a repository, `cwd`."""
    # Imported here: the context package loads the tools, which `queryloop sessions` (it
    # reads the sessionStore setting through this module) must not pay for.
    from ..context.system_prompt import find_git_root

    root = find_git_root(cwd)
    if root is None:
        return [cwd]
    parts = cwd.resolve().relative_to(root).parts
    return [*(root.joinpath(*parts[:i]) for i in range(len(parts))), cwd]


def agent_files(
    cwd: Path, *, user_home: Path, trusted: bool, claude_dir: Path | None = None
) -> FoundFiles:
    """The agent files (`*.md`, in subfolders too) of every agents folder, lowest precedence
    first (each folder sorted by path): a project's agent wins over the user's of the same
    name, as in Claude Code (code.claude.com/docs/en/sub-agents: "scans `.claude/agents/` and
    `~/.claude/agents/` recursively"), the one closest to `cwd` among the project's, and
    queryloop's over Claude Code's at one scope. An untrusted project's files are not listed;
    a notice names them.
    """
    folders = config_folders(
        cwd, AGENTS_DIR, user_home=user_home, trusted=trusted, claude_dir=claude_dir
    )
    found = [
        FoundFile(path, folder.scope, folder.layout)
        for folder in folders.folders
        for path in markdown_files(folder.path)
    ]
    return FoundFiles(tuple(found))  # an untrusted project's: counted in its one notice


def skill_files(
    cwd: Path, home: Path, *, trusted: bool, claude_dir: Path | None = None
) -> FoundFiles:
    """Every `<folder>/<skill>/SKILL.md`, highest precedence first, each folder sorted: the
    user's skills win over the project's (Claude Code: "personal skills win over project
    skills", code.claude.com/docs/en/skills), queryloop's over Claude Code's at one scope.
    An untrusted project's skills are not listed; a notice names them."""
    folders = config_folders(
        cwd, SKILLS_DIR, user_home=home, trusted=trusted, claude_dir=claude_dir
    )
    found = tuple(
        FoundFile(path, folder.scope, folder.layout)
        for folder in _precedence_order(folders.folders)
        for path in _skill_files(folder.path)
    )
    return FoundFiles(found)  # an untrusted project's: counted in its one notice


def _precedence_order(folders: Iterable[ConfigFolder]) -> list[ConfigFolder]:
    """User before project, the project's closest to `cwd` first; at one folder queryloop's
    first (first wins)."""
    rank = {FileScope.USER: 0, FileScope.PROJECT: 1}
    return sorted(folders, key=lambda f: (rank[f.scope], f.depth, f.layout is Layout.CLAUDE))


def markdown_files(folder: Path) -> list[Path]:
    """The `.md` files under `folder`, subfolders too (hidden ones skipped), sorted by path."""
    if not folder.is_dir():
        return []
    return [
        path
        for path in sorted(folder.rglob("*.md"))
        if path.is_file() and not any(p.startswith(".") for p in path.relative_to(folder).parts)
    ]


def _skill_files(folder: Path) -> Iterable[Path]:
    if not folder.is_dir():
        return []
    return sorted(p / SKILL_FILE for p in folder.iterdir() if (p / SKILL_FILE).is_file())


COMMANDS_DIR = "commands"


@dataclass(frozen=True, slots=True)
class FoundCommand:
    """A command file and the name it is invoked by (`/name`).

    The name is the file's path below its commands folder without `.md`, subfolders joined by
    `:` (Claude Code's namespacing: `frontend/component.md` is `/frontend:component`)."""

    path: Path
    scope: FileScope
    name: str


@dataclass(frozen=True, slots=True)
class FoundCommands:
    """Command files, highest precedence first, and notices."""

    commands: tuple[FoundCommand, ...]
    notices: tuple[str, ...] = ()
    """What was not used and why (an untrusted project's command files)."""


def command_files(cwd: Path, home: Path, claude: Path, *, trusted: bool) -> FoundCommands:
    """Every command file, highest precedence first (the user's before the project's,
    queryloop's folder before Claude Code's at one scope), each folder sorted by name. An
    untrusted project's commands are not listed; a notice names them."""
    folders = config_folders(cwd, COMMANDS_DIR, user_home=home, trusted=trusted, claude_dir=claude)
    found = tuple(
        command
        for folder in _precedence_order(folders.folders)
        for command in commands_in(folder.path, folder.scope)
    )
    return FoundCommands(found)  # an untrusted project's: counted in its one notice


def commands_in(folder: Path, scope: FileScope, namespace: str = "") -> list[FoundCommand]:
    """The `.md` files under `folder` (subfolders too; hidden ones skipped), named by their
    path (`a/b.md` is `a:b`), prefixed with `namespace:` when given (a plugin's name)."""
    if folder.is_file():  # a plugin may list one command file
        return [FoundCommand(folder, scope, _qualified(namespace, folder.stem))]
    if not folder.is_dir():
        return []
    found = []
    for path in markdown_files(folder):
        name = ":".join((*path.relative_to(folder).parts[:-1], path.stem))
        found.append(FoundCommand(path, scope, _qualified(namespace, name)))
    return found


def _qualified(namespace: str, name: str) -> str:
    return f"{namespace}:{name}" if namespace else name
