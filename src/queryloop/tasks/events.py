"""Task events: what the SDK's event stream says about background tasks."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class TaskEventKind(StrEnum):
    """The life of a background task as the event stream reports it."""

    STARTED = "task_started"
    PROGRESS = "task_progress"
    FINISHED = "task_finished"


class TaskType(StrEnum):
    """What runs in the background (Claude Code's task type names)."""

    SHELL = "local_bash"
    AGENT = "local_agent"


class TaskStatus(StrEnum):
    """Where a background task is; every status but `running` is final."""

    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    KILLED = "killed"


@dataclass(frozen=True, slots=True)
class TaskEvent:
    """A background task started, made progress or finished.

    Yielded by `query_loop()` (and so by `Agent.stream()`) between other events, and passed
    to `TaskManager.subscribe` listeners the moment it happens.
    """

    kind: TaskEventKind
    task_id: str
    task_type: TaskType
    description: str
    status: TaskStatus
    detail: str = ""
    """For `finished`: a one-line summary (exit code, error); for `progress`: what it does."""
    tool_use_id: str = ""
    """The tool call that started the task."""
