"""Channel two: one meta user message at the front of the conversation.

It carries what is fixed for the session but specific to it -- project memory (QUERYLOOP.md,
AGENTS.md and Claude Code's CLAUDE.md, CLAUDE.local.md) and today's date -- so the system
prompt stays identical across sessions.
Which memory files exist is the configuration layer's business (`config.memory` finds and
reads them); this module renders what it is given.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Protocol

from ..messages.constructors import meta_user_message
from ..messages.types import Message

logger = logging.getLogger(__name__)

MEMORY_FILE_NAMES = ("QUERYLOOP.md", "AGENTS.md")
"""queryloop's own memory files (the ones `#` and /memory add lines to)."""
FOLDER_MEMORY_FILES: tuple[tuple[str, str], ...] = (
    ("CLAUDE.md", "project"),
    (".claude/CLAUDE.md", "project"),
    ("QUERYLOOP.md", "project"),
    ("AGENTS.md", "project"),
    ("CLAUDE.local.md", "local"),
)
"""The memory files of one folder, in the order they are read, with their level: Claude
Code's project memory (`CLAUDE.md` or `.claude/CLAUDE.md`), then queryloop's, then the
user's private `CLAUDE.local.md` (code.claude.com/docs/en/memory). Later reads as more
specific, so queryloop's files come after Claude Code's."""
MAX_MEMORY_FILE_CHARS = 40_000

MEMORY_PREAMBLE = (
    "Codebase and user instructions are shown below. Be sure to adhere to these instructions. "
    "IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them "
    "exactly as written."
)


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """One memory file: where it is, which level it belongs to, and its (capped) text."""

    path: Path
    level: str
    """"user" (`$QUERYLOOP_HOME/QUERYLOOP.md`, `~/.claude/CLAUDE.md`), "project" (checked
    into the codebase), "local" (`CLAUDE.local.md`: the user's, not checked in) or "managed"
    (`/etc/claude-code/CLAUDE.md`)."""
    content: str
    parent: Path | None = None
    """The memory file whose `@path` imported this one (None: found where it is)."""


class PathMatcher(Protocol):
    """Whether a path matches a rule's `paths:` patterns (the configuration layer's globs)."""

    def matches(self, path: Path) -> bool:
        """True when the absolute `path` matches."""
        ...


@dataclass(frozen=True, slots=True)
class PathRule:
    """A rule file with `paths:` (Claude Code's `.claude/rules/`): memory attached once the
    agent works with a file `matcher` matches, like a subfolder's memory file."""

    file: MemoryFile
    """The rule's text, its front matter stripped."""
    globs: tuple[str, ...]
    """The patterns as written (for InstructionsLoaded hooks)."""
    matcher: PathMatcher


def build_user_context(
    memory: Sequence[MemoryFile], *, today: date | None = None
) -> dict[str, str]:
    """`{"queryloopMd": ..., "currentDate": ...}`; the memory key is absent without files."""
    context: dict[str, str] = {}
    rendered = render_memory(memory)
    if rendered:
        context["queryloopMd"] = rendered
    context["currentDate"] = f"Today's date is {(today or date.today()).isoformat()}."
    return context


def read_memory_file(path: Path) -> str | None:
    """The text of a memory file, capped at `MAX_MEMORY_FILE_CHARS`; None if unreadable."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        logger.warning("cannot read memory file %s: %s", path, exc)
        return None
    if len(text) > MAX_MEMORY_FILE_CHARS:
        text = text[:MAX_MEMORY_FILE_CHARS] + f"\n... (truncated at {MAX_MEMORY_FILE_CHARS} chars)"
    return text


def render_memory(files: Sequence[MemoryFile]) -> str:
    """The memory section: a preamble and each file under a 'Contents of' header."""
    if not files:
        return ""
    parts = [MEMORY_PREAMBLE]
    for f in files:
        label = _LABELS.get(f.level, _LABELS["user"])
        parts.append(f"Contents of {f.path} ({label}):\n\n{f.content.strip()}")
    return "\n\n".join(parts)


_LABELS = {
    "project": "project instructions, checked into the codebase",
    "local": "user's private project instructions, not checked in",
    "user": "user's private global instructions for all projects",
}
"""Claude Code's words for each level (managed memory reads like the user's)."""


def prepend_user_context(messages: Sequence[Message], context: Mapping[str, str]) -> list[Message]:
    """`messages` with one meta user message in front holding `context`; unchanged if empty.

    The text is Claude Code's, byte for byte (models are trained on it): the context wrapped in
    `<system-reminder>`, each entry as `# key` then its value, and the note that it may or may
    not be relevant so the model does not answer it.
    """
    if not context:
        return list(messages)
    return [meta_user_message(render_user_context(context)), *messages]


def render_user_context(context: Mapping[str, str]) -> str:
    """The meta user message's text for `context` (see `prepend_user_context`)."""
    body = "\n".join(f"# {key}\n{value}" for key, value in context.items())
    return (
        "<system-reminder>\n"
        "As you answer the user's questions, you can use the following context:\n"
        f"{body}\n"
        "\n"
        "      IMPORTANT: this context may or may not be relevant to your tasks.\n"
        "      You should not respond to this context unless it is highly relevant to your "
        "task.\n"
        "</system-reminder>\n"
    )
