"""Memory files (QUERYLOOP.md, AGENTS.md): which exist, read once per session.

`$QUERYLOOP_HOME/QUERYLOOP.md` (the user's), then QUERYLOOP.md and AGENTS.md in every folder
from the repository root (git root, or the filesystem root outside a repository) down to
`cwd`. Nearer files come later so they read as the more specific instructions.

The context layer renders memory (`context.user_context`) and announces nested memory files the
agent touches later; it never decides which files a session starts with. This module does, and
hands it the `MemoryFile`s it read. `SessionContext` takes both of a session's context channels
once: the git snapshot (`context.system_context`) and this memory.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from ..context.facts import GIT_STATUS_KEY, SessionFacts
from ..context.system_context import GIT_TIMEOUT_SECONDS, get_system_context
from ..context.system_prompt import environment_section, find_git_root
from ..context.user_context import (
    MEMORY_FILE_NAMES,
    MemoryFile,
    build_user_context,
    read_memory_file,
    render_memory,
)
from .discovery import SettingSources


def get_user_context(
    cwd: Path,
    *,
    user_home: Path,
    today: date | None = None,
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
) -> dict[str, str]:
    """`{"queryloopMd": ..., "currentDate": ...}` for `cwd`; the memory key is absent without
    files (`discover_memory_files`, rendered by `context.user_context.build_user_context`)."""
    found = discover_memory_files(cwd, user_home=user_home, sources=sources)
    return build_user_context(found, today=today)


def discover_memory_files(
    cwd: Path,
    *,
    user_home: Path,
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
) -> list[MemoryFile]:
    """The memory files of a session at `cwd`, read, in the order they are rendered: the
    user's (if `sources.user`), then the project's folders' (if `sources.project`)."""
    found: list[MemoryFile] = []
    seen: set[Path] = set()
    if sources.user:
        _add(found, seen, user_home / MEMORY_FILE_NAMES[0], "user")
    if sources.project:
        for folder in reversed(memory_folders(cwd)):
            for name in MEMORY_FILE_NAMES:
                _add(found, seen, folder / name, "project")
    return found


def memory_folders(cwd: Path) -> list[Path]:
    """`cwd` and its parents up to the repository root (or filesystem root), nearest first."""
    cwd = cwd.resolve()
    root = find_git_root(cwd)
    folders: list[Path] = []
    for folder in (cwd, *cwd.parents):
        folders.append(folder)
        if folder == root:
            break
    return folders


def _add(found: list[MemoryFile], seen: set[Path], path: Path, level: str) -> None:
    try:
        resolved = path.resolve()
        if resolved in seen or not resolved.is_file():
            return
    except OSError:
        return
    seen.add(resolved)
    content = read_memory_file(resolved)
    if content is not None and content.strip():
        found.append(MemoryFile(path=resolved, level=level, content=content))


class SessionContext:
    """Channel one and two context for one session, computed on first use and then kept.

    Memoized per instance, not globally: two sessions (or two tests) never share a snapshot,
    and one session never re-runs git or re-reads memory, so its prefix stays byte-identical.
    """

    def __init__(
        self,
        cwd: Path,
        *,
        user_home: Path,
        today: date | None = None,
        git_timeout: float = GIT_TIMEOUT_SECONDS,
        sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
    ) -> None:
        self.cwd = cwd
        self.user_home = user_home
        self.sources = sources
        self._today = today
        self._git_timeout = git_timeout
        self._system: dict[str, str] | None = None
        self._user: dict[str, str] | None = None

    def system_context(self) -> dict[str, str]:
        """The git snapshot (`get_system_context`), taken once."""
        if self._system is None:
            self._system = get_system_context(self.cwd, timeout=self._git_timeout)
        return dict(self._system)

    def user_context(self) -> dict[str, str]:
        """Project memory and today's date (`get_user_context`), read once."""
        if self._user is None:
            self._user = get_user_context(
                self.cwd, user_home=self.user_home, today=self._today, sources=self.sources
            )
        return dict(self._user)

    def facts(self, model: str) -> SessionFacts:
        """The session facts as they are now (`context.facts`): today's date, the memory
        section, the environment section for `model` and the git snapshot."""
        today = self._today or date.today()
        found = discover_memory_files(self.cwd, user_home=self.user_home, sources=self.sources)
        memory = render_memory(found)
        return SessionFacts(
            date=today.isoformat(),
            memory=memory,
            environment=environment_section(self.cwd, model),
            git_status=self.system_context().get(GIT_STATUS_KEY, ""),
        )
