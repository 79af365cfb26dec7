"""Read: a text file with line numbers, an image as an image block."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...messages.blocks import ImageBlock
from ..base import ToolContext, ToolError, ToolProgress, ToolResult
from ._common import PathTool, StrictInput, number_lines, record_read, resolve_path

DEFAULT_LIMIT = 2000
MAX_IMAGE_BYTES = 5 * 1024 * 1024
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
}
BINARY_SNIFF_BYTES = 8192

DESCRIPTION = """Reads a file from the local filesystem.

- file_path may be absolute or relative to the current working directory.
- By default reads up to 2000 lines from the start of the file; for long files pass offset (the
  1-based line number to start at) and limit (how many lines) to read a part.
- Lines longer than 2000 characters are cut.
- Output is in `cat -n` format: line numbers start at 1, followed by a tab and the line. The
  line-number prefix is not part of the file: never include it in Edit's old_string.
- Images (PNG, JPG, GIF, WebP) are shown to you as images.
- Binary files are refused; directories cannot be read (use LS).
- Read a file before you Edit or overwrite it. Reading several files at once in parallel is
  encouraged."""


class ReadInput(StrictInput):
    file_path: str = Field(description="The file to read (absolute or relative to the cwd)")
    offset: int | None = Field(
        default=None, ge=1, description="The line number to start reading from (1-based)"
    )
    limit: int | None = Field(default=None, ge=1, description="The number of lines to read")


class ReadTool(PathTool[ReadInput]):
    """The Read tool."""

    name = "Read"
    description = DESCRIPTION
    input_model: type[BaseModel] = ReadInput
    path_field = "file_path"
    path_verb = "Reading"
    read_only = True
    rerun_on_resume = True
    concurrency_safe = True

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        path = resolve_path(ctx, input.file_path)
        if not path.exists():
            return f"File does not exist: {path}. Current working directory: {ctx.cwd}"
        if path.is_dir():
            return f"{path} is a directory, not a file. Use LS to list a directory."
        return None

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        path = resolve_path(ctx, input.file_path)
        if path.suffix.lower() in IMAGE_TYPES:
            yield _read_image(path)
            record_read(ctx, path)
            return
        with path.open("rb") as f:
            head = f.read(BINARY_SNIFF_BYTES)
        if b"\0" in head:
            size = path.stat().st_size
            raise ToolError(
                f"{path} appears to be a binary file ({size} bytes); Read can only show text "
                "files and images. Use Bash with a suitable tool (for example `file` or `xxd`) "
                "to inspect it."
            )
        try:
            text = await ctx.files.read_text(path)  # an editor's unsaved buffer, if it hosts us
        except UnicodeDecodeError:
            # Not UTF-8 (the disk says so): shown with replacement characters.
            text = (await asyncio.to_thread(path.read_bytes)).decode("utf-8", errors="replace")
        # Counting lines of a big file takes a while: keep the event loop free.
        yield await asyncio.to_thread(_read_text, path, text, input.offset, input.limit, ctx)


def _read_image(path: Path) -> ToolResult:
    data = path.read_bytes()
    if len(data) > MAX_IMAGE_BYTES:
        raise ToolError(
            f"Image {path} is {len(data)} bytes; the limit is {MAX_IMAGE_BYTES} bytes. "
            "Resize it first (for example with Bash) and read the smaller copy."
        )
    source = {
        "type": "base64",
        "media_type": IMAGE_TYPES[path.suffix.lower()],
        "data": base64.b64encode(data).decode("ascii"),
    }
    return ToolResult(content=(ImageBlock(source=source),), data={"path": str(path)})


def _read_text(
    path: Path, text: str, offset: int | None, limit: int | None, ctx: ToolContext
) -> ToolResult:
    start = offset or 1
    count = limit or DEFAULT_LIMIT
    lines, total = _window(text, start, count)
    record_read(ctx, path, partial=start > 1 or total >= start + count)
    if total == 0:
        empty = f"<system-reminder>The file {path} exists but is empty.</system-reminder>"
        return ToolResult(content=empty)
    if not lines:
        return ToolResult(
            content=f"<system-reminder>The file {path} has only {total} lines; offset {start} "
            "is past its end.</system-reminder>"
        )
    body = number_lines(lines, start)
    last = start + len(lines) - 1
    if last < total:
        body += f"\n\n[Showing lines {start}-{last} of {total}. Use offset={last + 1} to read on.]"
    return ToolResult(content=body, data={"path": str(path), "lines": total})


def _window(text: str, start: int, count: int) -> tuple[list[str], int]:
    """Lines `start` to `start + count - 1` (1-based) of `text` and how many lines it has,
    as text mode reads lines (CRLF and CR end one as LF does), without splitting the whole
    text: a large file costs one copy at most."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # no copy without a \r
    total = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    lines: list[str] = []
    pos, number = 0, 1
    while number < start + count and pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end == -1 else end
        if number >= start:
            lines.append(text[pos:end])
        pos, number = end + 1, number + 1
    return lines, total
