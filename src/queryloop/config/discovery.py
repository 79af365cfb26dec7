"""Which agent, skill and command files exist, at which scope, under which trust.

Agent files: `$QUERYLOOP_HOME/agents/*.md` (user) and `<cwd>/.queryloop/agents/*.md`
(project). Skills: folders with a `SKILL.md` in `$QUERYLOOP_HOME/skills/` (user) and
`<cwd>/.queryloop/skills/` (project). Commands: Markdown files under `$QUERYLOOP_HOME/commands/`
and `~/.claude/commands/` (user), `<cwd>/.queryloop/commands/` and `<cwd>/.claude/commands/`
(project), subfolders naming a namespace. A project's files are instructions from whoever wrote
the repository, so they count only in a trusted folder (`config.trust`), like the project's
settings.

This module only finds files. Reading and parsing them stays with the packages that own the
formats (`agents.definitions`, `skills.loader`), which sit above this layer and call it. It
imports nothing of queryloop: `agents.definitions` is imported at start-up.
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


@dataclass(frozen=True, slots=True)
class FoundFile:
    """One file that exists, and the scope it was found at."""

    path: Path
    scope: FileScope


@dataclass(frozen=True, slots=True)
class AgentFiles:
    """The agent files to read, user files first (later ones win by name), and notices."""

    files: tuple[FoundFile, ...]
    notices: tuple[str, ...] = ()
    """What was not used and why (an untrusted project's agent files)."""


def agent_files(cwd: Path, *, user_home: Path, trusted: bool) -> AgentFiles:
    """The user's agent files, then the project's when `trusted`; each folder sorted by name.

    An untrusted project's files are not listed; a notice names them.
    """
    found = [FoundFile(p, FileScope.USER) for p in _markdown_files(user_home / AGENTS_DIR)]
    project_dir = cwd / PROJECT_AGENTS_DIR
    project = _markdown_files(project_dir)
    if trusted:
        return AgentFiles(tuple(found + [FoundFile(p, FileScope.PROJECT) for p in project]))
    if not project:
        return AgentFiles(tuple(found))
    names = ", ".join(sorted(p.name for p in project))
    notice = (
        f"{cwd} is not a trusted folder, so its agent files were ignored ({project_dir}: "
        f"{names}); run `queryloop trust` (or pass --trust) in this folder to use them"
    )
    return AgentFiles(tuple(found), (notice,))


def skill_folders(cwd: Path, home: Path, *, trusted: bool) -> list[tuple[Path, FileScope]]:
    """The skills folders to scan, highest precedence first (the project's only if trusted)."""
    folders = [(home / SKILLS_DIR, FileScope.USER)]
    if trusted:
        folders.append((cwd / PROJECT_SKILLS_DIR, FileScope.PROJECT))
    return folders


def skill_files(cwd: Path, home: Path, *, trusted: bool) -> tuple[FoundFile, ...]:
    """Every `<folder>/<skill>/SKILL.md`, highest precedence first, each folder sorted."""
    return tuple(
        FoundFile(path, scope)
        for folder, scope in skill_folders(cwd, home, trusted=trusted)
        for path in _skill_files(folder)
    )


def _markdown_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.md")) if folder.is_dir() else []


def _skill_files(folder: Path) -> Iterable[Path]:
    if not folder.is_dir():
        return []
    return sorted(p / SKILL_FILE for p in folder.iterdir() if (p / SKILL_FILE).is_file())


COMMANDS_DIR = "commands"
CLAUDE_DIR = ".claude"
"""Claude Code's folder, in the project (`<cwd>/.claude`) and in the home folder."""
COMMAND_SUFFIX = ".md"


def claude_home() -> Path:
    """Claude Code's user folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude` (as Claude Code)."""
    value = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(value).expanduser() if value else Path.home() / CLAUDE_DIR


@dataclass(frozen=True, slots=True)
class FoundCommand:
    """A command file and the name it is invoked by (`/name`).

    The name is the file's path below its commands folder without `.md`, subfolders joined by
    `:` (Claude Code's namespacing: `frontend/component.md` is `/frontend:component`)."""

    path: Path
    scope: FileScope
    name: str


def command_folders(
    cwd: Path, home: Path, claude: Path, *, trusted: bool
) -> list[tuple[Path, FileScope]]:
    """The commands folders, highest precedence first: the user's (queryloop's, then Claude
    Code's), then the project's (only if trusted; queryloop's, then Claude Code's)."""
    folders = [(home / COMMANDS_DIR, FileScope.USER), (claude / COMMANDS_DIR, FileScope.USER)]
    if trusted:
        folders += [
            (cwd / PROJECT_DIR / COMMANDS_DIR, FileScope.PROJECT),
            (cwd / CLAUDE_DIR / COMMANDS_DIR, FileScope.PROJECT),
        ]
    return folders


def command_files(
    cwd: Path, home: Path, claude: Path, *, trusted: bool
) -> tuple[FoundCommand, ...]:
    """Every command file, highest precedence first, each folder sorted by name."""
    return tuple(
        found
        for folder, scope in command_folders(cwd, home, claude, trusted=trusted)
        for found in commands_in(folder, scope)
    )


def commands_in(folder: Path, scope: FileScope, namespace: str = "") -> list[FoundCommand]:
    """The `.md` files under `folder` (subfolders too; hidden ones skipped), named by their
    path (`a/b.md` is `a:b`), prefixed with `namespace:` when given (a plugin's name)."""
    if folder.is_file():  # a plugin may list one command file
        return [FoundCommand(folder, scope, _qualified(namespace, folder.stem))]
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.rglob(f"*{COMMAND_SUFFIX}")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue
        name = ":".join((*relative.parts[:-1], path.stem))
        found.append(FoundCommand(path, scope, _qualified(namespace, name)))
    return found


def _qualified(namespace: str, name: str) -> str:
    return f"{namespace}:{name}" if namespace else name
