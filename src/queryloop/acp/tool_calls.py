"""A tool call as an editor shows it: kind, title, content (diffs), file locations.

Pure functions of the tool's name and input (and, for results, its output), after the
choices of Zed's Claude Code adapter (zed-industries/claude-code-acp, `src/tools.ts`), so an
editor shows queryloop's calls as it shows Claude Code's: an Edit or Write as a diff with
`oldText`/`newText`, a Read with the file to follow, a Bash call titled by its command and
completed with its output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    PlanEntry,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolKind,
)

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

KINDS: dict[str, ToolKind] = {
    "Read": "read",
    "NotebookRead": "read",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "edit",
    "NotebookEdit": "edit",
    "Bash": "execute",
    "BashOutput": "execute",
    "KillShell": "execute",
    "Glob": "search",
    "Grep": "search",
    "LS": "search",
    "ToolSearch": "search",
    "WebFetch": "fetch",
    "WebSearch": "fetch",
    "TodoWrite": "think",
    "Task": "think",
    "Agent": "think",
    "ExitPlanMode": "switch_mode",
}
"""The protocol's kind of each built-in tool (icons and grouping in the editor)."""

EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
"""Tools whose content is their diff: a result does not replace it."""


@dataclass(frozen=True)
class ToolInfo:
    """How one call is shown."""

    kind: ToolKind
    title: str
    content: list[ToolContent]
    locations: list[ToolCallLocation]


def tool_info(name: str, input: Mapping[str, Any], cwd: Path) -> ToolInfo:
    """Kind, title, content and locations of a call to `name` with `input`."""
    kind = KINDS.get(name, "other")
    path = _path(input, cwd)
    where = [ToolCallLocation(path=str(path))] if path is not None else []
    return ToolInfo(kind, _title(name, input), _content(name, input, path), where)


def _title(name: str, input: Mapping[str, Any]) -> str:
    subject = (
        input.get("command")
        or input.get("file_path")
        or input.get("notebook_path")
        or input.get("pattern")
        or input.get("url")
        or input.get("query")
        or input.get("description")
        or input.get("path")
    )
    if name == "Bash" and subject:
        return f"`{_one_line(str(subject))}`"
    if name == "TodoWrite":
        return "Update the plan"
    return f"{name} {_one_line(str(subject))}" if subject else name


def _content(name: str, input: Mapping[str, Any], path: Path | None) -> list[ToolContent]:
    if path is not None and name == "Edit":
        old, new = input.get("old_string"), input.get("new_string")
        return [_diff(path, str(old or ""), str(new or ""))]
    if path is not None and name == "MultiEdit":
        edits = input.get("edits") if isinstance(input.get("edits"), list) else []
        return [
            _diff(path, str(e.get("old_string") or ""), str(e.get("new_string") or ""))
            for e in edits or ()
            if isinstance(e, Mapping)
        ]
    if path is not None and name == "Write":
        return [_diff(path, _current_text(path), str(input.get("content") or ""))]
    if name == "Bash" and input.get("description"):
        return [text_content(str(input["description"]))]
    return []


def _diff(path: Path, old: str | None, new: str) -> FileEditToolCallContent:
    return FileEditToolCallContent(type="diff", path=str(path), old_text=old, new_text=new)


def _current_text(path: Path) -> str | None:
    """A Write's old text: the file as it is before the call (None: a new file)."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _path(input: Mapping[str, Any], cwd: Path) -> Path | None:
    raw = input.get("file_path") or input.get("notebook_path")
    if not isinstance(raw, str) or not raw:
        return None
    path = Path(raw).expanduser()
    return path if path.is_absolute() else cwd / path


def result_content(name: str, output: str, *, is_error: bool) -> list[ToolContent] | None:
    """What a finished call shows: its output (a command's as console text); None keeps
    what the call showed (an edit's diff)."""
    if name in EDIT_TOOLS and not is_error:
        return None
    if not output:
        return []
    if name in ("Bash", "BashOutput") or is_error:
        return [text_content(f"```\n{output.rstrip()}\n```")]
    return [text_content(output)]


def text_content(text: str) -> ContentToolCallContent:
    """Text as tool call content."""
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def plan_entries(input: Mapping[str, Any]) -> list[PlanEntry] | None:
    """TodoWrite's list as the protocol's plan; None when the input holds no list."""
    todos = input.get("todos")
    if not isinstance(todos, list):
        return None
    entries: list[PlanEntry] = []
    for todo in todos:
        if not isinstance(todo, Mapping):
            continue
        status = todo.get("status")
        entries.append(
            PlanEntry(
                content=str(todo.get("content") or todo.get("activeForm") or ""),
                status=status if status in ("pending", "in_progress", "completed") else "pending",
                priority="medium",
            )
        )
    return entries


def raw(value: Any) -> Any:
    """A value as JSON can carry it (tool inputs are JSON already; this guards the rest)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


def _one_line(text: str, limit: int = 120) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
