"""Write: create a file or overwrite one the agent has read."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel, Field

from ..base import ToolContext, ToolProgress, ToolResult
from ._common import (
    PathTool,
    StrictInput,
    record_read,
    resolve_path,
    stale_read_error,
)
from ._edits import write_text

DESCRIPTION = """Writes a file to the local filesystem, replacing it if it exists.

- file_path may be absolute or relative to the current working directory; missing parent
  directories are created.
- To overwrite an existing file you must have Read it first in this session, and it must not
  have changed since; otherwise the write is refused.
- Prefer Edit for changing part of an existing file: it sends only the difference.
- Do not create documentation or README files unless asked to."""


class WriteInput(StrictInput):
    file_path: str = Field(description="The file to write (absolute or relative to the cwd)")
    content: str = Field(description="The whole new content of the file")


class WriteTool(PathTool[WriteInput]):
    """The Write tool."""

    name = "Write"
    description = DESCRIPTION
    input_model: type[BaseModel] = WriteInput
    path_field = "file_path"
    path_verb = "Writing"

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        path = resolve_path(ctx, input.file_path)
        if path.is_dir():
            return f"{path} is a directory; give the path of a file to write."
        if path.exists():
            return stale_read_error(ctx, path, "writing to")
        return None

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        path = resolve_path(ctx, input.file_path)
        existed = path.exists()
        if existed and (problem := stale_read_error(ctx, path, "writing to")):
            yield ToolResult(content=problem, is_error=True)
            return

        await write_text(ctx, path, input.content)
        record_read(ctx, path)
        lines = input.content.count("\n") + (0 if input.content.endswith("\n") else 1)
        verb = "updated" if existed else "created"
        yield ToolResult(
            content=f"File {verb} successfully at: {path} ({lines} lines)",
            data={"path": str(path), "created": not existed},
        )
