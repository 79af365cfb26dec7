"""Adding to memory: the REPL's `#` shortcut and `/memory`, `Agent.add_memory()`.

As in Claude Code (https://code.claude.com/docs/en/memory, "Quickly add memories with the #
shortcut"): input that starts with `#` is not sent as a prompt; it becomes a line of a memory
file the user chooses:

- project: `<cwd>/QUERYLOOP.md` (or `<cwd>/AGENTS.md` when only that one exists), checked
  into the codebase and read by everyone's sessions;
- user: `$QUERYLOOP_HOME/QUERYLOOP.md`, the user's own instructions for every project.

The line is appended as a Markdown bullet. The memory in the session's first message is
fixed for the session (so the prompt cache holds); the running conversation learns of the
new line through a short meta message instead, and new sessions read it from the file.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from .user_context import MEMORY_FILE_NAMES


class MemoryScope(StrEnum):
    """Which memory file a line goes to."""

    PROJECT = "project"
    USER = "user"


def memory_path(scope: MemoryScope | str, cwd: Path, home: Path) -> Path:
    """The file a `scope` line is added to."""
    if MemoryScope(scope) is MemoryScope.USER:
        return home / MEMORY_FILE_NAMES[0]
    for name in MEMORY_FILE_NAMES:
        if (cwd / name).is_file():
            return cwd / name
    return cwd / MEMORY_FILE_NAMES[0]


def parse_memory_shortcut(line: str) -> str | None:
    """The memory text of a `# ...` input line, or None (not a memory line, or empty)."""
    text = line.strip()
    if not text.startswith("#"):
        return None
    return text.lstrip("#").strip() or None


def add_memory_line(text: str, path: Path) -> Path:
    """Append `- text` to the memory file at `path` (created if missing); returns it."""
    line = " ".join(text.split())
    if not line:
        raise ValueError("nothing to add to memory")
    path.parent.mkdir(parents=True, exist_ok=True)
    existing = path.read_text(encoding="utf-8") if path.is_file() else ""
    prefix = "" if not existing or existing.endswith("\n") else "\n"
    with path.open("a", encoding="utf-8") as f:
        f.write(f"{prefix}- {line}\n")
    return path


def memory_note(text: str, path: Path) -> str:
    """What the running conversation is told (its first message keeps the old memory)."""
    return (
        f"The user added this to their memory file {path}; follow it from now on as part of "
        f"the instructions in that file:\n- {' '.join(text.split())}"
    )
