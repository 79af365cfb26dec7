"""The built-in coding tools, with Claude Code's names and input fields.

Read, Glob, Grep and LS are read-only and concurrency-safe. Bash is concurrency-safe (and
read-only) only for a plain allowlisted read-only command; Write, Edit, MultiEdit and
TodoWrite run alone. Agent (subagents) and TaskOutput are concurrency-safe; TaskStop runs
alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import ConfigError
from ..base import BaseTool, Tool
from .background import TaskOutputTool, TaskStopTool
from .bash import BashTool, is_read_only_command
from .edit import EditTool
from .glob import GlobTool
from .grep import GrepTool
from .ls import LSTool
from .multi_edit import MultiEditTool
from .read import ReadTool
from .task import AgentTool
from .todo_write import TodoWriteTool
from .write import WriteTool

_BUILTIN: tuple[type[BaseTool[Any]], ...] = (
    BashTool,
    GlobTool,
    GrepTool,
    LSTool,
    ReadTool,
    EditTool,
    MultiEditTool,
    WriteTool,
    TodoWriteTool,
    AgentTool,
    TaskOutputTool,
    TaskStopTool,
)
"""The built-in tool classes, in the order the model is offered them."""

OTHER_BUILTIN_NAMES = ("Skill",)
"""Built-in tools made elsewhere (the Skill tool, by `queryloop.skills`) that a selection
may name."""

_NAMES = tuple(cls.name for cls in _BUILTIN) + OTHER_BUILTIN_NAMES
_ALIASES = {alias: cls.name for cls in _BUILTIN for alias in getattr(cls, "aliases", ())}


def selected_builtin_names(selection: bool | Sequence[str] = True) -> frozenset[str]:
    """The names of the built-in tools a selection offers: all (True), none (False) or those
    named (an older name counts: `Task` for `Agent`). An unknown name is a `ConfigError`
    listing the valid ones."""
    if isinstance(selection, bool):
        return frozenset(_NAMES if selection else ())
    unknown = sorted(set(selection) - set(_NAMES) - set(_ALIASES))
    if unknown:
        valid = ", ".join(_NAMES)
        raise ConfigError(f"unknown built-in tool(s) {', '.join(unknown)}; valid: {valid}")
    return frozenset(_ALIASES.get(name, name) for name in selection)


def builtin_tools(selection: bool | Sequence[str] = True) -> list[Tool]:
    """Fresh instances of the selected built-in tools (see `selected_builtin_names`), in a
    stable order."""
    names = selected_builtin_names(selection)
    return [cls() for cls in _BUILTIN if cls.name in names]


__all__ = [
    "OTHER_BUILTIN_NAMES",
    "AgentTool",
    "BashTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "LSTool",
    "MultiEditTool",
    "ReadTool",
    "TaskOutputTool",
    "TaskStopTool",
    "TodoWriteTool",
    "WriteTool",
    "builtin_tools",
    "is_read_only_command",
    "selected_builtin_names",
]
