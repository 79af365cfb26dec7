"""Memory files (QUERYLOOP.md, AGENTS.md, Claude Code's CLAUDE.md): which exist, read once per
session, with their `@path` imports.

In the order they are rendered (later reads as the more specific instruction):

1. managed: `/etc/claude-code/CLAUDE.md` (Claude Code's managed memory);
2. user: `~/.claude/CLAUDE.md` (`$CLAUDE_CONFIG_DIR`), the user's rule files without
   `paths:` (`~/.claude/rules/`, `config.rules`), then `$QUERYLOOP_HOME/QUERYLOOP.md`;
3. in every folder from the repository root (git root, or the filesystem root outside a
   repository) down to `cwd`: `CLAUDE.md`, `.claude/CLAUDE.md`, `QUERYLOOP.md`, `AGENTS.md`,
   `CLAUDE.local.md` (`context.user_context.FOLDER_MEMORY_FILES`); at `cwd`, the project's
   rule files without `paths:` (`.claude/rules/`, in a trusted folder) right after its
   `.claude/CLAUDE.md`, whose priority they share.

Rule files with `paths:` are not read into the first message: `SessionContext.path_rules`
hands them to the context layer, which attaches one when the agent works with a file it
matches.

Each file is followed by the files it imports (`context.memory_imports`); a file reached twice
(a symlink `CLAUDE.md -> AGENTS.md`, an import of a file found anyway) is read once. Like
QUERYLOOP.md, a project's CLAUDE.md is read in an untrusted folder too (it is text for the
model, not code); what trust decides is whether its imports may reach outside the project.

The context layer renders memory (`context.user_context`) and announces nested memory files the
agent touches later; it never decides which files a session starts with. This module does, and
hands it the `MemoryFile`s it read. `SessionContext` takes both of a session's context channels
once: the git snapshot (`context.system_context`) and this memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

from ..context.facts import GIT_STATUS_KEY, SessionFacts
from ..context.memory_imports import ImportPolicy, expand_imports
from ..context.system_context import GIT_TIMEOUT_SECONDS, get_system_context
from ..context.system_prompt import environment_section, find_git_root
from ..context.user_context import (
    FOLDER_MEMORY_FILES,
    MEMORY_FILE_NAMES,
    MemoryFile,
    PathRule,
    build_user_context,
    read_memory_file,
    render_memory,
)
from .discovery import SettingSources, claude_home, claude_managed_dir
from .rules import Rules, discover_rules

CLAUDE_MEMORY = "CLAUDE.md"
RULES_FOLLOW = ".claude/CLAUDE.md"
"""The folder memory file the project's rules come right after (same priority)."""


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


def project_root(cwd: Path) -> Path:
    """The repository around `cwd` (its git root), else `cwd`: where a project's memory may
    import from without trust."""
    cwd = cwd.resolve()
    return find_git_root(cwd) or cwd


def discover_memory_files(
    cwd: Path,
    *,
    user_home: Path,
    claude_dir: Path | None = None,
    policy: ImportPolicy | None = None,
    notices: list[str] | None = None,
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
    trusted: bool = False,
) -> list[MemoryFile]:
    """The memory files of a session at `cwd`, read, with their imports, in render order:
    the managed file, the user's (if `sources.user`), then the project's folders' (if
    `sources.project`; `CLAUDE.local.md` if `sources.local` too). Rule files without
    `paths:` are among them (the project's only when `trusted`).

    `policy` decides which imports are followed (default: as in an untrusted folder, nothing
    outside the project); `notices` hears of imports that were not followed and of rule
    files left out.
    """
    return discover_memory(
        cwd, user_home=user_home, claude_dir=claude_dir, policy=policy, notices=notices,
        sources=sources, trusted=trusted,
    )[0]  # fmt: skip


def discover_memory(
    cwd: Path,
    *,
    user_home: Path,
    claude_dir: Path | None = None,
    policy: ImportPolicy | None = None,
    notices: list[str] | None = None,
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
    trusted: bool = False,
) -> tuple[list[MemoryFile], tuple[PathRule, ...]]:
    """`discover_memory_files`, and the rule files with `paths:` (attached later)."""
    policy = policy or ImportPolicy(project_root(cwd), external=False)
    told = notices if notices is not None else []
    claude = claude_dir or claude_home()
    rules = discover_rules(
        cwd, user_home=user_home, trusted=trusted, sources=sources, claude_dir=claude
    )
    reader = _Reader(policy, told)
    reader.add(claude_managed_dir() / CLAUDE_MEMORY, "managed")
    if sources.user:
        reader.add(claude / CLAUDE_MEMORY, "user")
        reader.add_all(rules.user)
        reader.add(user_home / MEMORY_FILE_NAMES[0], "user")
    if sources.project:
        _add_folders(reader, cwd, sources, rules)
    told.extend(rules.notices)
    if notices is not None:
        notices[:] = list(dict.fromkeys(notices))
    return reader.found, rules.conditional


def _add_folders(reader: _Reader, cwd: Path, sources: SettingSources, rules: Rules) -> None:
    """The project's folders' memory files, root first; its rules after `cwd`'s
    `.claude/CLAUDE.md`."""
    here = cwd.resolve()
    for folder in reversed(memory_folders(cwd)):
        for name, level in FOLDER_MEMORY_FILES:
            if sources.reads(level):
                reader.add(folder / name, level)
            if name == RULES_FOLLOW and folder == here:
                reader.add_all(rules.project)


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


class _Reader:
    """Reads memory files in order, each once, each followed by its imports."""

    def __init__(self, policy: ImportPolicy, notices: list[str]) -> None:
        self.policy = policy
        self.notices = notices
        self.found: list[MemoryFile] = []
        self.seen: set[Path] = set()

    def add(self, path: Path, level: str) -> None:
        try:
            resolved = path.resolve()
            if resolved in self.seen or not resolved.is_file():
                return
        except OSError:
            return
        self.seen.add(resolved)
        content = read_memory_file(resolved)
        if content is None or not content.strip():
            return
        self._found(MemoryFile(path=resolved, level=level, content=content))

    def add_all(self, files: Sequence[MemoryFile]) -> None:
        """Files already read (rule files, their front matter stripped), each once."""
        for file in files:
            if file.path not in self.seen:
                self.seen.add(file.path)
                self._found(file)

    def _found(self, file: MemoryFile) -> None:
        self.found.append(file)
        self.found.extend(expand_imports(file, self.policy, self.seen, self.notices))


class SessionContext:
    """Channel one and two context for one session, computed on first use and then kept.

    Memoized per instance, not globally: two sessions (or two tests) never share a snapshot,
    and one session never re-runs git or re-reads memory, so its prefix stays byte-identical.
    `policy` decides which memory imports are followed (the workspace's trust and deny rules).
    """

    def __init__(
        self,
        cwd: Path,
        *,
        user_home: Path,
        today: date | None = None,
        git_timeout: float = GIT_TIMEOUT_SECONDS,
        policy: ImportPolicy | None = None,
        sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
        trusted: bool = False,
    ) -> None:
        self.cwd = cwd
        self.user_home = user_home
        self.policy = policy
        self.sources = sources
        self.trusted = trusted
        self._path_rules: tuple[PathRule, ...] = ()
        self._today = today
        self._git_timeout = git_timeout
        self._system: dict[str, str] | None = None
        self._memory: list[MemoryFile] | None = None
        self._notices: list[str] = []
        self._user: dict[str, str] | None = None

    def system_context(self) -> dict[str, str]:
        """The git snapshot (`get_system_context`), taken once."""
        if self._system is None:
            self._system = get_system_context(self.cwd, timeout=self._git_timeout)
        return dict(self._system)

    def memory_files(self) -> list[MemoryFile]:
        """The memory files the session starts with (`discover_memory_files`), read once."""
        if self._memory is None:
            self._memory, self._path_rules = discover_memory(
                self.cwd,
                user_home=self.user_home,
                policy=self.policy,
                notices=self._notices,
                sources=self.sources,
                trusted=self.trusted,
            )
        return list(self._memory)

    def path_rules(self) -> tuple[PathRule, ...]:
        """The rule files with `paths:`, read with `memory_files` (attached when a file they
        match is worked with)."""
        self.memory_files()
        return self._path_rules

    def memory_notices(self) -> list[str]:
        """Imports that were not followed and rule files left out, and why (after
        `memory_files`)."""
        self.memory_files()
        return list(self._notices)

    def user_context(self) -> dict[str, str]:
        """Project memory and today's date, rendered once from `memory_files`."""
        if self._user is None:
            self._user = build_user_context(self.memory_files(), today=self._today)
        return dict(self._user)

    def facts(self, model: str) -> SessionFacts:
        """The session facts as they are now (`context.facts`): today's date, the memory
        section, the environment section for `model` and the git snapshot."""
        today = self._today or date.today()
        memory = render_memory(self.memory_files())
        return SessionFacts(
            date=today.isoformat(),
            memory=memory,
            environment=environment_section(self.cwd, model),
            git_status=self.system_context().get(GIT_STATUS_KEY, ""),
        )
