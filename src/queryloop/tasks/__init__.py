"""queryloop.tasks: background tasks (shell commands, subagents) of a session."""

from .events import TaskEvent, TaskEventKind, TaskStatus, TaskType
from .manager import BackgroundTask, TaskManager, TaskOutcome

__all__ = [
    "BackgroundTask",
    "TaskEvent",
    "TaskEventKind",
    "TaskManager",
    "TaskOutcome",
    "TaskStatus",
    "TaskType",
]
