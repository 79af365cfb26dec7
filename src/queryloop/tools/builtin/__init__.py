"""The built-in coding tools, with Claude Code's names and input fields.

Read, Glob, Grep and LS are read-only and concurrency-safe. Bash is concurrency-safe (and
read-only) only for a plain allowlisted read-only command; Write, Edit, MultiEdit and
TodoWrite run alone. TaskOutput is concurrency-safe; TaskStop runs alone. WebFetch and
WebSearch are read-only and concurrency-safe, and ask before they run unless a rule allows
them (they reach the network from queryloop's own process). The Agent tool
(concurrency-safe) lives with the subagents in `queryloop.agents`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
from .todo_write import TodoWriteTool
from .web_fetch import WebFetchTool
from .web_search import WebSearchTool
from .write import WriteTool

_BUILTIN: tuple[type[BaseTool[Any]] | str, ...] = (
    BashTool,
    GlobTool,
    GrepTool,
    LSTool,
    ReadTool,
    EditTool,
    MultiEditTool,
    WriteTool,
    TodoWriteTool,
    "Agent",
    TaskOutputTool,
    TaskStopTool,
    WebFetchTool,
    WebSearchTool,
)
"""The built-in tools, in the order the model is offered them (the tools array is part of the
prompt-cache prefix: it must not move). A name stands for a tool made above this package."""

PROVIDED_ELSEWHERE: Mapping[str, tuple[str, ...]] = {"Agent": ("Task",), "Skill": ()}
"""Built-in tools implemented above `tools` (Agent by `queryloop.agents`, Skill by
`queryloop.skills`), by name with their older names: a selection may name them, and
`builtin_tools(provided=...)` puts them in their place."""

OTHER_BUILTIN_NAMES = ("Skill",)
"""Built-in tools made elsewhere that a selection may name but `builtin_tools` does not place
(the Skill tool is added by `queryloop.skills`)."""


def _name(entry: type[BaseTool[Any]] | str) -> str:
    return entry if isinstance(entry, str) else entry.name


def _aliases(cls: type[BaseTool[Any]]) -> tuple[str, ...]:
    return tuple(getattr(cls, "aliases", ()))


_NAMES = tuple(_name(entry) for entry in _BUILTIN) + OTHER_BUILTIN_NAMES
_ALIASES = {
    **{alias: e.name for e in _BUILTIN if not isinstance(e, str) for alias in _aliases(e)},
    **{alias: name for name, aliases in PROVIDED_ELSEWHERE.items() for alias in aliases},
}


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


def builtin_tools(
    selection: bool | Sequence[str] = True, *, provided: Sequence[Tool] = ()
) -> list[Tool]:
    """Fresh instances of the selected built-in tools (see `selected_builtin_names`), in a
    stable order. `provided` are the built-ins made above this package (the Agent tool of
    `queryloop.agents`); a selected one takes its place in that order."""
    names = selected_builtin_names(selection)
    given = {tool.name: tool for tool in provided}
    tools: list[Tool] = []
    for entry in _BUILTIN:
        name = _name(entry)
        if name not in names:
            continue
        if isinstance(entry, str):
            if name in given:
                tools.append(given[name])
        else:
            tools.append(entry())
    return tools


__all__ = [
    "OTHER_BUILTIN_NAMES",
    "PROVIDED_ELSEWHERE",
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
    "WebFetchTool",
    "WebSearchTool",
    "WriteTool",
    "builtin_tools",
    "is_read_only_command",
    "selected_builtin_names",
]
