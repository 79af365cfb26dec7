"""Edits as diffs: what Edit, MultiEdit and Write would change (the permission prompt) and what
they changed (after the call). Pure functions over files and tool inputs; `render.diff_text`
colours the lines for the terminal."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

EDIT_TOOL_NAMES = frozenset({"Edit", "MultiEdit", "Write"})
CONTEXT_LINES = 3
MAX_DIFF_LINES = 40


def _path(input: Mapping[str, Any], cwd: Path) -> Path | None:
    raw = input.get("file_path")
    if not isinstance(raw, str) or not raw:
        return None
    path = Path(raw).expanduser()
    return path if path.is_absolute() else cwd / path


def _replacements(tool: str, input: Mapping[str, Any]) -> list[tuple[str, str, bool]] | None:
    if tool == "Edit":
        edits: Any = [input]
    elif tool == "MultiEdit":
        edits = input.get("edits")
    else:
        return None
    if not isinstance(edits, list):
        return None
    out: list[tuple[str, str, bool]] = []
    for edit in edits:
        if not isinstance(edit, Mapping):
            return None
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        out.append((old, new, bool(edit.get("replace_all"))))
    return out


def proposed_diff(tool: str, input: Mapping[str, Any], cwd: Path) -> list[str] | None:
    """The unified diff (lines, no trailing newlines) the call would make to its file; None
    for other tools or when it cannot be computed (the tool itself will report why)."""
    if tool not in EDIT_TOOL_NAMES:
        return None
    path = _path(input, cwd)
    if path is None:
        return None
    try:
        old = path.read_text(encoding="utf-8") if path.is_file() else ""
    except (OSError, UnicodeDecodeError):
        return None
    if tool == "Write":
        content = input.get("content")
        if not isinstance(content, str):
            return None
        new = content
    else:
        from ..tools.base import ToolError
        from ..tools.builtin._edits import Replacement, apply_all

        edits = _replacements(tool, input)
        if edits is None:
            return None
        try:
            new, _ = apply_all(old, [Replacement(o, n, a) for o, n, a in edits])
        except ToolError:
            return None
    return unified(old, new, _label(path, cwd))


def applied_diff(tool: str, input: Mapping[str, Any], cwd: Path) -> list[str] | None:
    """The diff an Edit or MultiEdit made, from its input and the edited file: the edits are
    undone on a copy of the file's text (each new_string back to its old_string), and the
    copy is compared with the file, so the diff has whole lines, context and the file's line
    numbers. None for other tools or when the new text is not found."""
    edits = _replacements(tool, input)
    path = _path(input, cwd)
    if edits is None or path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    before = text
    for old, new, replace_all in reversed(edits):
        if not new or new not in before:
            return None
        before = before.replace(new, old) if replace_all else before.replace(new, old, 1)
    return unified(before, text, _label(path, cwd)) or None


def unified(old: str, new: str, label: str) -> list[str]:
    """`difflib.unified_diff` lines of old → new (no line terminators)."""
    diff = difflib.unified_diff(
        old.splitlines(),
        new.splitlines(),
        fromfile=f"a/{label}",
        tofile=f"b/{label}",
        n=CONTEXT_LINES,
        lineterm="",
    )
    return list(diff)


def diff_stats(lines: list[str]) -> tuple[int, int]:
    """(lines added, lines removed) in a unified diff."""
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    return added, removed


def _label(path: Path, cwd: Path) -> str:
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)
