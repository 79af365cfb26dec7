"""`TaskManager`: a session's background tasks (shell commands and subagents).

A task starts from a tool call (`Bash` or `Agent` with `run_in_background`), runs as an
asyncio task beside the conversation, writes its output to a file, and ends `completed`,
`failed` or `killed`. When it ends:

- listeners (`subscribe`) hear a `TaskEvent` at once (the REPL prints it), and the loop
  yields the same events at its next step (`drain_events`);
- a notification waits for the thread that started it (`drain_notifications`), which the
  attachment pipeline turns into a `task_notification` attachment at the next turn
  boundary (the seeds' queued-command channel, phase two, so subagents get theirs too).
  A task whose finished output the model already read with TaskOutput is not notified again.

`aclose()` (session end) stops what still runs and returns it, so the caller can say so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .events import TaskEvent, TaskEventKind, TaskStatus, TaskType
from .shell import BackgroundShell

if TYPE_CHECKING:
    from ..sandbox import ExecGuard, Sandbox

log = logging.getLogger(__name__)

OUTPUT_PREVIEW_CHARS = 30_000

TaskListener = Callable[[TaskEvent], None]


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    """How a background job ended: status, a one-line summary, and a result text."""

    status: TaskStatus
    summary: str
    result: str = ""
    exit_code: int | None = None


@dataclass(eq=False)
class BackgroundTask:
    """One background task. Mutable: its status moves from running to a final one."""

    id: str
    type: TaskType
    description: str
    output_path: Path
    owner: str | None = None
    """The agent id of the thread that started it; None for the main thread."""
    tool_use_id: str = ""
    started_at: float = field(default_factory=time.time)
    status: TaskStatus = TaskStatus.RUNNING
    summary: str = ""
    result: str = ""
    exit_code: int | None = None
    finished_at: float | None = None
    notified: bool = False
    stop_requested: bool = False
    runner: asyncio.Task[None] | None = None
    stopper: Callable[[], Awaitable[None]] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def running(self) -> bool:
        """True until the task reaches a final status."""
        return self.status is TaskStatus.RUNNING

    def output(self, limit: int = OUTPUT_PREVIEW_CHARS) -> str:
        """The task's output so far (its end, when longer than `limit` characters)."""
        try:
            text = self.output_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        if len(text) > limit:
            return f"[... {len(text) - limit} earlier characters omitted ...]\n{text[-limit:]}"
        return text

    def notification(self) -> dict[str, Any]:
        """The `task_notification` attachment's data for this finished task."""
        return {
            "task_id": self.id,
            "task_type": self.type.value,
            "description": self.description,
            "status": self.status.value,
            "summary": self.summary,
            "output_file": str(self.output_path),
            "tool_use_id": self.tool_use_id,
            "result": self.result,
        }


class TaskManager:
    """The background tasks of one session (see the module docstring)."""

    def __init__(self, output_dir: Path | None = None) -> None:
        self.output_dir = output_dir or Path(tempfile.mkdtemp(prefix="queryloop-tasks-"))
        self._tasks: dict[str, BackgroundTask] = {}
        self._events: list[TaskEvent] = []
        self._listeners: list[TaskListener] = []

    # ---- starting ------------------------------------------------------------------------

    async def start_shell(
        self,
        command: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        description: str = "",
        owner: str | None = None,
        tool_use_id: str = "",
        sandbox: Sandbox | None = None,
        working_dirs: Sequence[Path] = (),
        guard: ExecGuard | None = None,
    ) -> BackgroundTask:
        """Run `command` in the background (in `sandbox` when given, `working_dirs` writable
        there; its programs checked by `guard` when given); returns at once with the task."""
        task_id = self._new_id("b")
        path = self.output_dir / f"{task_id}.output"
        shell = await BackgroundShell.spawn(
            command, cwd, env, path, sandbox=sandbox, working_dirs=working_dirs, guard=guard
        )

        async def job(_task: BackgroundTask) -> TaskOutcome:
            code = await shell.wait()
            if code == 0:
                return TaskOutcome(TaskStatus.COMPLETED, "completed (exit code 0)", exit_code=0)
            return TaskOutcome(TaskStatus.FAILED, f"failed with exit code {code}", exit_code=code)

        return self.start(
            TaskType.SHELL,
            description or command,
            job,
            output_path=path,
            task_id=task_id,
            owner=owner,
            tool_use_id=tool_use_id,
            stopper=shell.stop,
        )

    def start(
        self,
        type: TaskType,
        description: str,
        job: Callable[[BackgroundTask], Awaitable[TaskOutcome]],
        *,
        output_path: Path | None = None,
        task_id: str | None = None,
        owner: str | None = None,
        tool_use_id: str = "",
        stopper: Callable[[], Awaitable[None]] | None = None,
    ) -> BackgroundTask:
        """Run `job(task)` as a background task. Without a `stopper`, stopping cancels it."""
        task_id = task_id or self._new_id("a")
        path = output_path or self.output_dir / f"{task_id}.output"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
        task = BackgroundTask(task_id, type, description, path, owner, tool_use_id, stopper=stopper)
        self._tasks[task_id] = task
        task.runner = asyncio.get_running_loop().create_task(self._run(task, job))
        self._emit(task, TaskEventKind.STARTED)
        return task

    async def _run(
        self, task: BackgroundTask, job: Callable[[BackgroundTask], Awaitable[TaskOutcome]]
    ) -> None:
        try:
            outcome = await job(task)
        except asyncio.CancelledError:
            outcome = TaskOutcome(TaskStatus.KILLED, "was stopped")
        except Exception as exc:
            log.exception("background task %s failed", task.id)
            outcome = TaskOutcome(TaskStatus.FAILED, f"failed: {type(exc).__name__}: {exc}")
        self._finish(task, outcome)

    def _finish(self, task: BackgroundTask, outcome: TaskOutcome) -> None:
        if not task.running:
            return
        if task.stop_requested:
            outcome = TaskOutcome(TaskStatus.KILLED, "was stopped", outcome.result)
        task.status = outcome.status
        task.summary = outcome.summary
        task.result = outcome.result
        task.exit_code = outcome.exit_code
        task.finished_at = time.time()
        task.done.set()
        self._emit(task, TaskEventKind.FINISHED, outcome.summary)

    # ---- looking and stopping ------------------------------------------------------------

    def get(self, task_id: str) -> BackgroundTask | None:
        """The task with this id, or None."""
        return self._tasks.get(task_id)

    def all(self) -> list[BackgroundTask]:
        """Every task of the session, oldest first."""
        return list(self._tasks.values())

    def running(self) -> list[BackgroundTask]:
        """The tasks still running."""
        return [t for t in self._tasks.values() if t.running]

    async def wait(self, task_id: str, timeout_s: float) -> BackgroundTask:
        """Wait up to `timeout_s` for the task to finish; returns it either way."""
        task = self.require(task_id)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(task.done.wait(), timeout_s)
        return task

    async def stop(self, task_id: str) -> BackgroundTask:
        """Stop a running task (its process group, or its subagent) and wait for it."""
        task = self.require(task_id)
        if not task.running:
            return task
        task.stop_requested = True
        if task.stopper is not None:
            await task.stopper()
        elif task.runner is not None:
            task.runner.cancel()
        if task.runner is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait({task.runner})
        self._finish(task, TaskOutcome(TaskStatus.KILLED, "was stopped"))
        return task

    async def aclose(self) -> list[BackgroundTask]:
        """Stop every running task (the session is ending); returns the ones stopped."""
        stopped = self.running()
        for task in stopped:
            try:
                await self.stop(task.id)
            except Exception:
                log.exception("could not stop background task %s", task.id)
        return stopped

    def require(self, task_id: str) -> BackgroundTask:
        task = self._tasks.get(task_id)
        if task is None:
            known = ", ".join(self._tasks) or "none"
            raise KeyError(f"No background task with id {task_id!r} (known tasks: {known})")
        return task

    # ---- what the loop and UIs read ------------------------------------------------------

    def progress(self, task: BackgroundTask, detail: str) -> None:
        """Report progress of a running task (a subagent's step)."""
        if task.running:
            self._emit(task, TaskEventKind.PROGRESS, detail)

    def drain_notifications(self, owner: str | None = None) -> list[dict[str, Any]]:
        """Finished tasks of `owner`'s thread not yet told to the model; marks them told."""
        ready = [t for t in self._tasks.values() if t.owner == owner and not t.running]
        out = [t.notification() for t in ready if not t.notified]
        for task in ready:
            task.notified = True
        return out

    def drain_events(self) -> list[TaskEvent]:
        """Task events since the last call (the loop yields them into the event stream)."""
        events, self._events = self._events, []
        return events

    def subscribe(self, listener: TaskListener) -> Callable[[], None]:
        """Call `listener` with every task event as it happens; returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _emit(self, task: BackgroundTask, kind: TaskEventKind, detail: str = "") -> None:
        event = TaskEvent(
            kind, task.id, task.type, task.description, task.status, detail, task.tool_use_id
        )
        self._events.append(event)
        for listener in list(self._listeners):
            try:
                listener(event)
            except Exception:  # a UI callback must not break the task
                log.exception("task listener failed")

    def _new_id(self, prefix: str) -> str:
        while True:
            candidate = prefix + secrets.token_hex(4)[:7]
            if candidate not in self._tasks:
                return candidate
