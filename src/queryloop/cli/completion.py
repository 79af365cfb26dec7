"""Tab completion in the REPL: slash commands, and files after `@` (a mention attaches the file).

`file_candidates` is pure (a folder and a typed prefix in, relative paths out) and unit-tested;
`ReplCompleter` adapts it and the command table to prompt_toolkit (this module is imported
only when the full prompt starts). Completion runs on Tab only, never while typing, so nothing
pops up uninvited.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
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
    """prompt_toolkit completer: `/` commands at the start of the line, `@` files anywhere."""

    def __init__(self, cwd: Path, commands: Mapping[str, str]) -> None:
        self.cwd = cwd
        self.commands = commands

    def get_completions(self, document: Any, complete_event: Any) -> Iterator[Any]:
        """Completions for the text before the cursor."""
        before = document.text_before_cursor
        if before.startswith("/") and " " not in before:
            for text, help in command_candidates(before, self.commands):
                yield Completion(text, start_position=-len(before), display_meta=help)
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            for path in file_candidates(self.cwd, word[1:]):
                yield Completion(f"@{path}", start_position=-len(word), display=path)


def help_table(commands: Iterable[Any]) -> dict[str, str]:
    """{name: help} from `commands.COMMANDS.values()`."""
    return {c.name: c.help for c in commands}
