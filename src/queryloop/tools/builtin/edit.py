"""Edit: one exact string replacement in a file the agent has read."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..base import ToolContext, ToolError, ToolProgress, ToolResult
from ._common import PathTool, StrictInput, record_read, resolve_path
from ._edits import Replacement, apply_all, read_for_edit, snippet, to_lf, write_text

DESCRIPTION = """Performs exact string replacements in a file.

- You must Read the file in this session before editing it, and it must not have changed
  since; otherwise the edit is refused.
- file_path may be absolute or relative to the current working directory.
- old_string must match the file exactly, including indentation. Do not include the
  line-number prefix that Read shows (a number and a tab).
- The edit fails if old_string is not found, or is found more than once: then add surrounding
  lines to make it unique, or set replace_all to replace every occurrence (useful for renames).
- An empty old_string creates a new file (or fills an empty one) with new_string.
- Returns the edited region with line numbers."""


class EditInput(StrictInput):
    file_path: str = Field(description="The file to modify (absolute or relative to the cwd)")
    old_string: str = Field(description="The exact text to replace")
    new_string: str = Field(description="The text to replace it with (must differ)")
    replace_all: bool = Field(default=False, description="Replace every occurrence")


class FileEditTool(PathTool[Any]):
    """Shared behaviour of Edit and MultiEdit; subclasses say which replacements to make."""

    path_field = "file_path"
    path_verb = "Editing"

    def replacements(self, input: Any) -> list[Replacement]:
        raise NotImplementedError

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        try:
            await self._plan(input, ctx)
        except ToolError as exc:
            return str(exc)
        return None

    async def _plan(self, input: Any, ctx: ToolContext) -> tuple[Path, str, int, int, bool]:
        """(path, new text, offset of the first change, length of the new region, crlf)."""
        path = resolve_path(ctx, input.file_path)
        edits = self.replacements(input)
        creating = not path.exists() and len(edits) >= 1 and edits[0].old_string == ""
        text, crlf = to_lf("" if creating else await read_for_edit(ctx, path))
        new_text, offset = apply_all(text, edits)
        grown = len(new_text) - len(text) + max(len(e.old_string) for e in edits)
        return path, new_text, offset, max(0, grown), crlf

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        path, new_text, offset, region, crlf = await self._plan(input, ctx)
        await write_text(ctx, path, new_text, crlf=crlf)
        record_read(ctx, path)
        shown = snippet(new_text, offset, region)
        yield ToolResult(
            content=f"The file {path} has been updated. Here are the edited lines:\n{shown}",
            data={"path": str(path)},
        )


class EditTool(FileEditTool):
    """The Edit tool."""

    name = "Edit"
    description = DESCRIPTION
    input_model: type[BaseModel] = EditInput

    def replacements(self, input: Any) -> list[Replacement]:
        return [Replacement(input.old_string, input.new_string, input.replace_all)]
