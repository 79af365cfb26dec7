"""Which agent and skill files exist, at which scope, under which trust.

Agent files: `$QUERYLOOP_HOME/agents/*.md` (user) and `<cwd>/.queryloop/agents/*.md`
(project). Skills: folders with a `SKILL.md` in `$QUERYLOOP_HOME/skills/` (user) and
`<cwd>/.queryloop/skills/` (project). A project's files are instructions from whoever wrote
the repository, so they count only in a trusted folder (`config.trust`), like the project's
settings.

This module only finds files. Reading and parsing them stays with the packages that own the
formats (`agents.definitions`, `skills.loader`), which sit above this layer and call it. It
imports nothing of queryloop: `agents.definitions` is imported at start-up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

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
