"""LS: list a folder as an indented tree."""

from __future__ import annotations

import asyncio
import fnmatch
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ..base import ToolContext, ToolProgress, ToolResult
from ._common import PathTool, StrictInput, resolve_path

MAX_ENTRIES = 1000
SKIP_NAMES = frozenset({"__pycache__", "node_modules"})

DESCRIPTION = f"""Lists files and folders under a path as an indented tree (recursive).

- path: absolute or relative to the cwd (default: the cwd).
- ignore: optional glob patterns of names to leave out, e.g. ["*.log", "build"].
- Hidden entries (starting with "."), __pycache__ and node_modules are left out.
- At most {MAX_ENTRIES} entries; use a deeper path or Glob for large trees.
- Prefer Glob or Grep when you know what you are looking for."""


class LSInput(StrictInput):
    path: str | None = Field(default=None, description="The folder to list (default: the cwd)")
    ignore: list[str] | None = Field(default=None, description="Glob patterns of names to skip")


class LSTool(PathTool[LSInput]):
    """The LS tool."""

    name = "LS"
    description = DESCRIPTION
    input_model: type[BaseModel] = LSInput
    path_field = "path"
    path_verb = "Listing"
    read_only = True
    rerun_on_resume = True
    concurrency_safe = True

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        root = resolve_path(ctx, input.path or ".")
        if not root.exists():
            return f"Path does not exist: {root}. Current working directory: {ctx.cwd}"
        if not root.is_dir():
            return f"{root} is a file, not a folder. Use Read to read it."
        return None

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        root = resolve_path(ctx, input.path or ".")
        hidden = ctx.hidden()
        lines, truncated = await asyncio.to_thread(
            list_tree, root, tuple(input.ignore or ()), hidden
        )
        text = "\n".join([f"- {root}/", *lines])
        if truncated:
            text += (
                f"\n(Listing stopped after {MAX_ENTRIES} entries; list a subfolder or use Glob.)"
            )
        yield ToolResult(content=text, data={"entries": len(lines)})


def _skipped(name: str, ignore: tuple[str, ...]) -> bool:
    return (
        name.startswith(".") or name in SKIP_NAMES or any(fnmatch.fnmatch(name, p) for p in ignore)
    )


def list_tree(
    root: Path, ignore: tuple[str, ...], hidden: Callable[[Path], bool] | None = None
) -> tuple[list[str], bool]:
    """Indented `- name` lines (folders end in /), depth first; True when cut at the cap.
    `hidden` leaves out what `Read` deny rules protect."""
    lines: list[str] = []

    def visit(folder: Path, depth: int) -> bool:
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            return True
        for entry in entries:
            if _skipped(entry.name, ignore) or (hidden is not None and hidden(Path(entry.path))):
                continue
            if len(lines) >= MAX_ENTRIES:
                return False
            is_dir = entry.is_dir(follow_symlinks=False)
            lines.append(f"{'  ' * depth}- {entry.name}{'/' if is_dir else ''}")
            if is_dir and not visit(Path(entry.path), depth + 1):
                return False
        return True

    complete = visit(root, 1)
    return lines, not complete
