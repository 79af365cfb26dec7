"""Helpers shared by the built-in file tools: paths, permissions, read-state, line numbers."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..base import PASSTHROUGH, BaseTool, FileReadRecord, InputT, PermissionDecision, ToolContext

MAX_LINE_CHARS = 2000


def compact_schema(schema: dict[str, Any]) -> None:
    """Drop generated titles and show `X | None = None` fields as plain optional `X`.

    The model sees fewer tokens and the same meaning; an explicit null is still accepted.
    """
    schema.pop("title", None)
    for prop in schema.get("properties", {}).values():
        prop.pop("title", None)
        options = prop.get("anyOf")
        if isinstance(options, list) and prop.get("default", 0) is None:
            non_null = [o for o in options if o != {"type": "null"}]
            if len(non_null) == 1:
                del prop["anyOf"], prop["default"]
                prop.update(non_null[0])


class StrictInput(BaseModel):
    """Base of built-in input models: unknown fields are an error the model can fix."""

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, json_schema_extra=compact_schema
    )


def field_of(input: Any, name: str, default: Any = None) -> Any:
    """A field of a parsed input model or of a raw mapping (permission code may pass either)."""
    if isinstance(input, Mapping):
        return input.get(name, default)
    return getattr(input, name, default)


def resolve_path(ctx: ToolContext, path: str) -> Path:
    """Absolute, `..`-free and symlink-resolved; relative paths are taken from ctx.cwd."""
    return Path(os.path.realpath(ctx.resolve(path)))


def is_inside_working_dirs(ctx: ToolContext, path: Path) -> bool:
    """True when `path` (already resolved) lies in one of the session's working folders."""
    return any(path.is_relative_to(os.path.realpath(d)) for d in ctx.working_dirs)


def path_permission(ctx: ToolContext, raw_path: str | None, verb: str) -> PermissionDecision:
    """Ask before touching a path outside the working folders; otherwise no opinion."""
    if not raw_path:
        return PASSTHROUGH
    path = resolve_path(ctx, raw_path)
    if is_inside_working_dirs(ctx, path):
        return PASSTHROUGH
    dirs = ", ".join(str(d) for d in ctx.working_dirs)
    return PermissionDecision(
        "ask", message=f"{verb} {path} is outside the working directories ({dirs})"
    )


def record_read(ctx: ToolContext, path: Path, *, partial: bool = False) -> None:
    """Remember what the agent has seen of `path` (Edit and Write check it). The record is
    the disk's (mtime, size) even when the text came from an editor's buffer: a save, a
    formatter or a checkout still calls for a new Read (docs/acp.md, "Read-state")."""
    try:
        st = path.stat()
    except FileNotFoundError:  # written into an editor's buffer it has not saved yet
        ctx.read_files.pop(str(path), None)
        return
    ctx.read_files[str(path)] = FileReadRecord(
        mtime_ns=st.st_mtime_ns, size=st.st_size, partial=partial
    )


def stale_read_error(ctx: ToolContext, path: Path, action: str) -> str | None:
    """Why `action` may not touch the existing file `path` now, or None when it may.

    The file must have been read (or written) by the agent and not changed since.
    """
    record = ctx.read_files.get(str(path))
    if record is None:
        return f"File has not been read yet. Read {path} first before {action} it."
    st = path.stat()
    if st.st_mtime_ns != record.mtime_ns or st.st_size != record.size:
        return (
            f"File {path} has been modified since it was last read (by the user or a tool such "
            f"as a formatter). Read it again before {action} it."
        )
    return None


def number_lines(lines: list[str], first_line: int) -> str:
    """`cat -n` style: a right-aligned line number, a tab, the line (long lines are cut)."""
    out = []
    for n, line in enumerate(lines, start=first_line):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + f"... [line truncated, {len(line)} characters]"
        out.append(f"{n:>6}\t{line}")
    return "\n".join(out)


def display_path(ctx: ToolContext, path: Path) -> str:
    """The path as the model should see it: absolute."""
    return str(path)


class PathTool(BaseTool[InputT]):
    """A built-in tool that works on one path field: permission rules match that path, and
    a path outside the working folders asks first (`path_verb` words the question)."""

    path_field = "path"
    path_verb = "Using"

    def permission_subject(self, input: Any) -> str | None:
        return str(field_of(input, self.path_field) or "") or None

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        return path_permission(ctx, field_of(input, self.path_field), self.path_verb)
