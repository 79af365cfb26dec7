"""Exact string replacement shared by Edit and MultiEdit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..base import ToolContext, ToolError
from ._common import number_lines, stale_read_error

SNIPPET_CONTEXT_LINES = 4


@dataclass(frozen=True, slots=True)
class Replacement:
    """One exact replacement."""

    old_string: str
    new_string: str
    replace_all: bool = False


def apply_replacement(text: str, edit: Replacement, label: str = "") -> tuple[str, int]:
    """(new text, offset of the first change). Raises ToolError with an actionable message."""
    where = f"{label}: " if label else ""
    if edit.old_string == edit.new_string:
        raise ToolError(f"{where}No changes to make: old_string and new_string are the same.")
    if edit.old_string == "":
        if text.strip():
            raise ToolError(
                f"{where}old_string is empty but the file is not; an empty old_string only "
                "works to fill an empty or new file. Quote the text to replace."
            )
        return edit.new_string, 0
    count = text.count(edit.old_string)
    if count == 0:
        raise ToolError(
            f"{where}String to replace not found in the file (0 matches). old_string must match "
            "the file exactly, including whitespace and indentation, without Read's line-number "
            f"prefixes. Read the file again if unsure.\nString: {edit.old_string}"
        )
    if count > 1 and not edit.replace_all:
        raise ToolError(
            f"{where}Found {count} matches of the string to replace, but replace_all is false. "
            "To replace every occurrence set replace_all to true; to replace only one, add "
            f"surrounding lines to old_string so it is unique.\nString: {edit.old_string}"
        )
    first = text.index(edit.old_string)
    if edit.replace_all:
        return text.replace(edit.old_string, edit.new_string), first
    return text.replace(edit.old_string, edit.new_string, 1), first


def apply_all(text: str, edits: list[Replacement]) -> tuple[str, int]:
    """Apply edits in order; (new text, offset of the first change). All or nothing."""
    first_change: int | None = None
    for i, edit in enumerate(edits, start=1):
        label = f"Edit {i} of {len(edits)}" if len(edits) > 1 else ""
        text, offset = apply_replacement(text, edit, label)
        first_change = offset if first_change is None else min(first_change, offset)
    return text, first_change or 0


async def read_for_edit(ctx: ToolContext, path: Path) -> str:
    """The current text of a file the agent may edit (through `ctx.files`: the editor's
    buffer when an editor hosts the agent); raises ToolError otherwise."""
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file.")
    if not path.exists():
        raise ToolError(
            f"File does not exist: {path}. Current working directory: {ctx.cwd}. To create a "
            "file use Write (or Edit with an empty old_string)."
        )
    problem = stale_read_error(ctx, path, "editing")
    if problem:
        raise ToolError(problem)
    try:
        return await ctx.files.read_text(path)
    except UnicodeDecodeError as exc:
        raise ToolError(
            f"{path} is not valid UTF-8 text ({exc.reason} at byte {exc.start}); edit it with "
            "Bash instead."
        ) from exc


def to_lf(text: str) -> tuple[str, bool]:
    """(text with LF line endings, whether it used CRLF). Models write LF; files may not."""
    if "\r\n" in text:
        return text.replace("\r\n", "\n"), True
    return text, False


async def write_text(ctx: ToolContext, path: Path, text: str, *, crlf: bool = False) -> None:
    """Write exactly `text` through `ctx.files` (LF turned back into CRLF for a CRLF file)."""
    await ctx.files.write_text(path, text.replace("\n", "\r\n") if crlf else text)


def snippet(text: str, offset: int, new_len: int) -> str:
    """Numbered lines around the changed region so the model can check its work."""
    lines = text.splitlines()
    first = text.count("\n", 0, offset)
    last = text.count("\n", 0, offset + new_len)
    lo = max(0, first - SNIPPET_CONTEXT_LINES)
    hi = min(len(lines), last + SNIPPET_CONTEXT_LINES + 1)
    return number_lines(lines[lo:hi], lo + 1)
