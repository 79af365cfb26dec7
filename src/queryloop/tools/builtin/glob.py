"""Glob: find files by name pattern, newest first."""

from __future__ import annotations

import asyncio
import glob as globlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..base import ToolContext, ToolProgress, ToolResult
from ._common import PathTool, StrictInput, resolve_path

MAX_RESULTS = 100
SKIP_PARTS = frozenset({".git", ".hg", ".svn"})

DESCRIPTION = f"""Fast file pattern matching for any codebase size.

- Supports glob patterns such as "**/*.js" or "src/**/*.ts" (`**` matches any number of
  folders, hidden files included).
- path is the folder to search in (absolute or relative to the cwd; default: the cwd).
  Omit it rather than passing "undefined" or "null".
- Returns matching file paths sorted by modification time, newest first, at most
  {MAX_RESULTS}.
- Use Grep to search file contents. Running several searches in parallel is encouraged."""


class GlobInput(StrictInput):
    pattern: str = Field(description="The glob pattern to match files against")
    path: str | None = Field(
        default=None, description="The folder to search in (default: the current directory)"
    )


class GlobTool(PathTool[GlobInput]):
    """The Glob tool."""

    name = "Glob"
    description = DESCRIPTION
    input_model: type[BaseModel] = GlobInput
    path_field = "path"
    path_verb = "Searching"
    read_only = True
    rerun_on_resume = True
    concurrency_safe = True

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        root = resolve_path(ctx, input.path or ".")
        if not root.is_dir():
            return f"Directory does not exist: {root}. Current working directory: {ctx.cwd}"
        return None

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        root = resolve_path(ctx, input.path or ".")
        matches = await asyncio.to_thread(find_files, root, input.pattern)
        hidden = ctx.hidden()
        if hidden is not None:
            matches = [m for m in matches if not hidden(m)]
        if not matches:
            yield ToolResult(content="No files found", data={"count": 0})
            return
        shown = [str(p) for p in matches[:MAX_RESULTS]]
        if len(matches) > MAX_RESULTS:
            shown.append(
                f"(Showing {MAX_RESULTS} of {len(matches)} files. Use a more specific path "
                "or pattern.)"
            )
        yield ToolResult(content="\n".join(shown), data={"count": len(matches)})


def find_files(root: Path, pattern: str) -> list[Path]:
    """Files under `root` matching `pattern` (absolute patterns allowed), newest first."""
    full = pattern if os.path.isabs(pattern) else os.path.join(globlib.escape(str(root)), pattern)
    found: list[tuple[float, Path]] = []
    for name in globlib.iglob(full, recursive=True, include_hidden=True):
        path = Path(name)
        if SKIP_PARTS.intersection(path.parts) or not path.is_file():
            continue
        try:
            found.append((path.stat().st_mtime, path))
        except OSError:
            continue
    found.sort(key=lambda item: (-item[0], str(item[1])))
    return [p for _, p in found]
