"""queryloop.tasks: background tasks (shell commands, subagents) of a session."""

from .events import TaskEvent, TaskEventKind, TaskStatus, TaskType
from .manager import TASKS_KEY, BackgroundTask, TaskManager, TaskOutcome

__all__ = [
    "TASKS_KEY",
    "BackgroundTask",
    "TaskEvent",
    "TaskEventKind",
    "TaskManager",
    "TaskOutcome",
    "TaskStatus",
    "TaskType",
]
