"""Ctrl-C is not an end (issue 25.9): `queryloop batch` interrupted while two tasks run their
tool calls prints its summary, and a re-run resumes those two tasks (a model request each,
their tool call done again, their files written) instead of counting them as failed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from batch_model import PARENT_ALIVE, has_tool_result, task_id_of
from batch_support import batch_process

from queryloop.batch import BatchTask, read_results
from queryloop.session import session_path
from queryloop.testing import MessagesServer, text, tool_use, turn

PROGRESS_IN_PIPE = {"TTY_COMPATIBLE": "1"}
"""rich draws the live progress bar into the pipe."""

TASKS = 6


class WritingModel:
    """Each task runs one Bash call that waits while its hold marker exists, then writes
    `out.txt`; after a successful tool result it answers. A call that was interrupted (its
    result an error) is made again, as a model told to continue would."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def hold(self, task: str) -> None:
        (self.folder / f"{task}.hold").touch()

    def release_all(self) -> None:
        for mark in self.folder.glob("*.hold"):
            mark.unlink()

    def running(self, task: str) -> bool:
        """Whether `task`'s Bash call has started (in this run or an earlier one)."""
        return (self.folder / f"{task}.started").is_file()

    def __call__(self, body: dict[str, Any]) -> Any:
        task = task_id_of(body)
        if has_tool_result(body) and not _last_result_failed(body):
            return turn(text(f"answer for {task}"))
        started, mark = self.folder / f"{task}.started", self.folder / f"{task}.hold"
        command = (
            f"touch {started}; while [ -e {mark} ] && {PARENT_ALIVE}; do sleep 0.05; done; "
            f"echo {task} > out.txt"
        )
        return turn(text(f"Working on {task}."), tool_use("Bash", {"command": command}))


def _last_result_failed(body: dict[str, Any]) -> bool:
    results = [
        block
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    return bool(results and results[-1].get("is_error"))


class Stderr:
    """The child's stderr, read on a thread so the test can wait for what it shows."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        self._stream = process.stderr
        self.text = ""
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while chunk := self._stream.read(1):
            self.text += chunk

    def join(self) -> str:
        self._thread.join(timeout=30)
        return self.text


def wait_for(what: str, predicate: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def streamed_to_its_end(transcript: Path) -> bool:
    """Whether the task's transcript holds its tool call's whole message, not only the draft
    written before the tool started: the tool may start while the response still streams,
    and an interrupt then is `aborted_streaming`, not `aborted_tools`."""
    if not transcript.is_file():
        return False
    drafts: set[str] = set()
    for line in transcript.read_text().split("\n")[:-1]:  # whole lines: it is being written
        record = json.loads(line)
        message = record.get("message") or {}
        if record.get("record") != "message" or message.get("type") != "assistant":
            continue
        if record.get("partial"):
            drafts.add(message["uuid"])
        elif message["uuid"] in drafts:
            return True
    return False


def result_records(transcript: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    return [r for r in lines if r.get("record") == "result"]


@pytest.mark.slow
def test_ctrl_c_prints_the_summary_and_a_rerun_resumes_the_interrupted_tasks(
    tmp_path: Path,
) -> None:
    tasks, out, home = tmp_path / "tasks.jsonl", tmp_path / "results.jsonl", tmp_path / "home"
    ids = [f"t{i}" for i in range(TASKS)]
    tasks.write_text(
        "".join(
            json.dumps({"id": t, "prompt": f"Please do task {t}.", "cwd": f"w/{t}"}) + "\n"
            for t in ids
        )
    )
    model = WritingModel(tmp_path / "model")
    for task in ids[2:]:
        model.hold(task)

    def transcript(task: str) -> Path:
        session = BatchTask(task, "x").with_session(str(out.resolve())).session
        assert session is not None
        return session_path(session, tasks.parent / "w" / task, home)

    def in_its_tool(task: str) -> bool:
        return model.running(task) and streamed_to_its_end(transcript(task))

    with MessagesServer(model) as server:
        first = batch_process(tasks, out, server, home, env=PROGRESS_IN_PIPE)
        stderr = Stderr(first)
        try:
            # t0 and t1 are done, t2 and t3 are inside their Bash calls, their responses
            # streamed to the end: Ctrl-C (the terminal sends SIGINT to the whole foreground
            # process group).
            wait_for(
                "2/6 with t2 and t3 running",
                lambda: "2/6" in stderr.text and in_its_tool("t2") and in_its_tool("t3"),
            )
            os.killpg(first.pid, signal.SIGINT)
            stdout, _ = first.communicate(timeout=60)
        finally:
            if first.poll() is None:
                os.killpg(first.pid, signal.SIGKILL)
                first.communicate()
        first_err = stderr.join()
        assert first.returncode == 130, first_err
        # Ctrl-C prints the summary, which says what was interrupted and what to do.
        assert "batch: 2 of 6 tasks have results" in stdout, (stdout, first_err)
        assert "interrupted" in stdout and "run again" in stdout, stdout
        assert sorted(read_results(out)) == ["t0", "t1"]
        # The interrupt came while the tools ran: that is aborted_tools.
        for task in ("t2", "t3"):
            assert [r["terminal"] for r in result_records(transcript(task))] == ["aborted_tools"]

        model.release_all()
        before = len(server.requests)
        second = batch_process(tasks, out, server, home, env=PROGRESS_IN_PIPE)
        stdout, stderr_text = second.communicate(timeout=120)
        assert second.returncode == 0, stderr_text
        asked_for = {task_id_of(body) for body in server.requests[before:]}
    # The interrupted tasks asked the model again (resumed), as did the ones never started.
    assert asked_for == {"t2", "t3", "t4", "t5"}
    for task in ids:
        assert (tasks.parent / "w" / task / "out.txt").read_text().strip() == task
    results = read_results(out)
    assert all(r.terminal == "completed" and r.error is None for r in results.values())
    assert results["t2"].attempts == results["t3"].attempts == 2
    assert "6 of 6 tasks have results (2 from earlier runs), 0 failed, 2 resumed" in stdout
