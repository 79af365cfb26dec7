"""Grep: search file contents with a regex (ripgrep when installed, Python otherwise)."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..base import ToolContext, ToolProgress, ToolResult
from ._common import PathTool, StrictInput, resolve_path
from ._grep_search import GrepQuery, OutputMode, search_python, search_ripgrep, split_globs

DESCRIPTION = """A powerful search tool for file contents, built on ripgrep.

- Use Grep for content searches; never run grep or rg through Bash.
- pattern is a regular expression (ripgrep syntax), e.g. "log.*Error" or "def\\s+\\w+".
  Escape literal braces: "interface\\{\\}".
- path: a file or folder (absolute or relative to the cwd; default: the cwd).
- Filter files with glob (e.g. "*.js", "*.{ts,tsx}") or type (e.g. "py", "js", "rust").
- output_mode: "files_with_matches" (default: file paths, newest first), "content" (matching
  lines, with -n line numbers and -A/-B/-C context lines) or "count" (matches per file).
- -i: case insensitive. multiline: let patterns match across lines (`.` matches newlines).
- head_limit: only the first N lines / files / counts."""


class GrepInput(StrictInput):
    pattern: str = Field(description="The regular expression to search for")
    path: str | None = Field(default=None, description="File or folder to search (default: cwd)")
    glob: str | None = Field(default=None, description='Glob to filter files, e.g. "*.{ts,tsx}"')
    type: str | None = Field(default=None, description='File type, e.g. "py", "js", "rust"')
    output_mode: OutputMode = Field(
        default="files_with_matches", description="content, files_with_matches or count"
    )
    case_insensitive: bool = Field(default=False, alias="-i", description="Ignore case")
    line_numbers: bool = Field(
        default=True, alias="-n", description="Show line numbers (content mode)"
    )
    after: int | None = Field(
        default=None, ge=0, alias="-A", description="Lines to show after each match (content mode)"
    )
    before: int | None = Field(
        default=None, ge=0, alias="-B", description="Lines to show before each match (content mode)"
    )
    context: int | None = Field(
        default=None, ge=0, alias="-C", description="Lines to show around each match (content mode)"
    )
    head_limit: int | None = Field(default=None, ge=1, description="Keep only the first N")
    multiline: bool = Field(default=False, description="Let the pattern span lines")


class GrepTool(PathTool[GrepInput]):
    """The Grep tool. `use_ripgrep=False` forces the pure-Python backend."""

    name = "Grep"
    description = DESCRIPTION
    input_model: type[BaseModel] = GrepInput
    path_field = "path"
    path_verb = "Searching"
    read_only = True
    rerun_on_resume = True
    concurrency_safe = True

    def __init__(self, *, use_ripgrep: bool | None = None) -> None:
        found = shutil.which("rg")
        self.rg_path = found if use_ripgrep is not False else None
        if use_ripgrep and found is None:
            raise ValueError("use_ripgrep=True but no `rg` executable is on PATH")

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        root = resolve_path(ctx, input.path or ".")
        if not root.exists():
            return f"Path does not exist: {root}. Current working directory: {ctx.cwd}"
        return None

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        query = _query(input, resolve_path(ctx, input.path or "."), ctx.hidden())
        if self.rg_path and query.hidden is None:
            lines = await search_ripgrep(self.rg_path, query)
        else:
            lines = await asyncio.to_thread(search_python, query)
        yield _format(query, lines, input.head_limit)


def _query(input: Any, root: Path, hidden: Callable[[Path], bool] | None = None) -> GrepQuery:
    context = input.context or 0
    return GrepQuery(
        pattern=input.pattern,
        root=root,
        mode=input.output_mode,
        globs=split_globs(input.glob),
        file_type=input.type,
        ignore_case=input.case_insensitive,
        line_numbers=input.line_numbers,
        before=input.before if input.before is not None else context,
        after=input.after if input.after is not None else context,
        multiline=input.multiline,
        hidden=hidden,
    )


def _newest_first(paths: list[str]) -> list[str]:
    def mtime(p: str) -> float:
        try:
            return Path(p).stat().st_mtime
        except OSError:
            return 0.0

    return sorted(paths, key=lambda p: (-mtime(p), p))


def _format(q: GrepQuery, lines: list[str], head_limit: int | None) -> ToolResult:
    if not lines:
        return ToolResult(content="No matches found", data={"count": 0})
    if q.mode == "files_with_matches":
        lines = _newest_first(lines)
    total = len(lines)
    shown = lines[:head_limit] if head_limit else lines
    more = f"\n(Showing the first {len(shown)} of {total}.)" if len(shown) < total else ""
    if q.mode == "files_with_matches":
        return ToolResult(
            content=f"Found {total} files\n" + "\n".join(shown) + more, data={"count": total}
        )
    if q.mode == "count":
        matches = sum(int(line.rsplit(":", 1)[1]) for line in lines)
        summary = f"\n\nFound {matches} matching lines across {total} files."
        return ToolResult(content="\n".join(shown) + more + summary, data={"count": matches})
    return ToolResult(content="\n".join(shown) + more, data={"count": total})
