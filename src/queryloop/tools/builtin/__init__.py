"""The built-in coding tools, with Claude Code's names and input fields.

Read, Glob, Grep and LS are read-only and concurrency-safe. Bash is concurrency-safe (and
read-only) only for a plain allowlisted read-only command; Write, Edit, MultiEdit and
TodoWrite run alone. Agent (subagents) and TaskOutput are concurrency-safe; TaskStop runs
alone.
"""

from __future__ import annotations

from ..base import Tool
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


def builtin_tools() -> list[Tool]:
    """Fresh instances of every built-in tool, in a stable order."""
    return [
        BashTool(),
        GlobTool(),
        GrepTool(),
        LSTool(),
        ReadTool(),
        EditTool(),
        MultiEditTool(),
        WriteTool(),
        TodoWriteTool(),
        AgentTool(),
        TaskOutputTool(),
        TaskStopTool(),
    ]


__all__ = [
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
]
