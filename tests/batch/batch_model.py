"""A scripted model for the batch tests: each task runs one Bash call, then answers.

The Bash call records the worker's pid (`$PPID`: the Bash tool starts bash directly) and
bash's own, and sleeps while a marker file for its task exists, so a test can kill the
worker in the middle of the task. The answer depends only on the task id, so a task that
was interrupted and resumed answers exactly what an uninterrupted one does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from queryloop.testing import text, tool_use, turn

TASK_ID = re.compile(r"task (t\d+)")

PARENT_ALIVE = "kill -0 $PPID 2>/dev/null"
"""A held Bash call's loop goes on only while the worker that ran it lives: a test that kills
the worker (its Bash command runs in a session of its own, out of the killed group) or fails
before releasing the hold leaves no loop behind."""


def task_id_of(body: dict[str, Any]) -> str:
    match = TASK_ID.search(json.dumps(body["messages"]))
    assert match, "no task id in the request"
    return match.group(1)


def has_tool_result(body: dict[str, Any]) -> bool:
    return any(
        isinstance(block, dict) and block.get("type") == "tool_result"
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
    )


class BatchModel:
    """`(request body) -> Turn` for `MessagesServer`."""

    def __init__(self, folder: Path) -> None:
        self.pids = folder / "pids"
        self.marks = folder / "marks"
        self.pids.mkdir(parents=True, exist_ok=True)
        self.marks.mkdir(parents=True, exist_ok=True)

    def __call__(self, body: dict[str, Any]) -> Any:
        task = task_id_of(body)
        if not has_tool_result(body):
            pid_file = self.pids / f"{task}.pid"
            command = (
                f"echo $PPID $$ > {pid_file}.tmp && mv {pid_file}.tmp {pid_file}; "
                f"while [ -e {self.marks / task} ] && {PARENT_ALIVE}; do sleep 0.05; done; "
                f"cat task.txt"
            )
            return turn(text(f"Working on {task}."), tool_use("Bash", {"command": command}))
        return turn(text(f"answer for {task}"))

    def forget_pids(self) -> None:
        """Drop the recorded pids (before another run of the same tasks)."""
        for path in self.pids.glob("*.pid"):
            path.unlink()

    def hold(self, task: str) -> None:
        """Make `task`'s Bash call wait until `release(task)`."""
        (self.marks / task).touch()

    def release(self, task: str) -> None:
        (self.marks / task).unlink(missing_ok=True)

    def pids_of(self, task: str) -> tuple[int, int] | None:
        """(worker pid, bash pid) once the task's Bash call ran."""
        path = self.pids / f"{task}.pid"
        if not path.is_file():
            return None
        worker, bash = path.read_text().split()
        return int(worker), int(bash)
