"""Tab completion in the REPL: slash commands and skills (`/name`), the words a command takes
first (`/mcp login`), and files after `@` (a mention attaches the file).

`file_candidates` is pure (a folder and a typed prefix in, relative paths out) and unit-tested;
`ReplCompleter` adapts it and the command table to prompt_toolkit (this module is imported
only when the full prompt starts). Completion runs on Tab only, never while typing, so nothing
pops up uninvited.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import (
    AsyncGenerator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from pathlib import Path
from typing import Any

from prompt_toolkit.completion import Completer, Completion

SKIPPED_DIRS = frozenset({".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache",
                          ".pytest_cache", ".ruff_cache", ".tox", "dist", "build"})  # fmt: skip
MAX_CANDIDATES = 50


def command_candidates(typed: str, commands: Mapping[str, str]) -> list[tuple[str, str]]:
    """(`/name`, help) for the commands whose name starts with what follows the `/`."""
    stem = typed[1:] if typed.startswith("/") else typed
    return [(f"/{name}", help) for name, help in commands.items() if name.startswith(stem)]


def subcommand_candidates(typed: str, subcommands: Mapping[str, Sequence[str]]) -> list[str]:
    """`/name word` for the words command `name` takes first that start with what is typed
    after `/name ` (`/mcp l` → `/mcp login`); none once a word is complete and spaced."""
    head, _, word = typed[1:].partition(" ")
    if " " in word:
        return []
    return [f"/{head} {sub}" for sub in subcommands.get(head, ()) if sub.startswith(word)]


def file_candidates(cwd: Path, typed: str, limit: int = MAX_CANDIDATES) -> list[str]:
    """Paths under `cwd` that complete `typed` (what follows the `@`): entries of the folder
    `typed` names so far whose names start with its last part; folders end with `/`. Hidden
    entries only when the last part starts with a dot; build and VCS folders never."""
    folder_part, _, stem = typed.rpartition("/")
    folder = (cwd / folder_part) if folder_part else cwd
    try:
        resolved = folder.resolve()
        resolved.relative_to(cwd.resolve())
    except (OSError, ValueError):
        return []  # outside the working folder: not offered
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    out: list[str] = []
    for entry in entries:
        name = entry.name
        if not name.startswith(stem):
            continue
        if name.startswith(".") and not stem.startswith("."):
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and name in SKIPPED_DIRS:
            continue
        prefix = f"{folder_part}/" if folder_part else ""
        out.append(f"{prefix}{name}{'/' if is_dir else ''}")
        if len(out) >= limit:
            break
    return out


class ReplCompleter(Completer):
    """prompt_toolkit completer: `/` commands at the start of the line, `@` files anywhere.

    `commands` is asked at every Tab: the skills are known only once the session has
    started (behind the first prompt), and the list may change while the REPL runs."""

    def __init__(
        self,
        cwd: Path,
        commands: Callable[[], Mapping[str, str]],
        *,
        ready: Callable[[], Awaitable[None]] | None = None,
        subcommands: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.cwd = cwd
        self.commands = commands
        self.ready = ready
        """Awaited before `/` completions: the session's start (skills) may still run."""
        self.subcommands = subcommands or {}
        """Command name → the words it takes first (`SlashCommand.subcommands`)."""

    async def get_completions_async(
        self, document: Any, complete_event: Any
    ) -> AsyncGenerator[Completion, None]:
        """As `get_completions`; when nothing matches a `/` word yet and the session is still
        starting (the skills are read then), wait for the start and look again. Only then:
        `/cos` Tab Enter must not wait for a start it does not need."""
        found = list(self.get_completions(document, complete_event))
        if not found and self.ready is not None and document.text_before_cursor.startswith("/"):
            with contextlib.suppress(Exception):  # a failed start is reported by the REPL
                await self.ready()
            found = list(self.get_completions(document, complete_event))
        for completion in found:
            yield completion

    def get_completions(self, document: Any, complete_event: Any) -> Iterator[Any]:
        """Completions for the text before the cursor."""
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            for text, help in command_candidates(before, self.commands()):
                yield Completion(text, start_position=-len(before), display_meta=help)
            return
        if before.startswith("/"):
            for text in subcommand_candidates(before, self.subcommands):
                yield Completion(text, start_position=-len(before))
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            for path in file_candidates(self.cwd, word[1:]):
                yield Completion(f"@{path}", start_position=-len(word), display=path)


def help_table(commands: Iterable[Any], skills: Mapping[str, Any]) -> dict[str, str]:
    """{name: help} from `commands.COMMANDS.values()` and the user's skills and custom
    commands (`Agent.slash_commands`: `/name` runs one; a built-in command of the same name
    wins, as `Repl.handle_line` decides). The help shows a command's `argument-hint`."""
    table = {}
    for name, skill in skills.items():
        hint = skill.options.argument_hint
        table[name] = f"{skill.kind.value}: {hint + ' ' if hint else ''}{skill.description}"
    table.update({c.name: c.help for c in commands})
    return table
