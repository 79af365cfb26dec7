"""`queryloop batch --session-store postgresql://...`: a task killed on one worker resumes on
another (issue 33.2). Two `queryloop batch` processes with different QUERYLOOP_HOMEs play two
machines that share only the PostgreSQL store (and the results file): the first is SIGKILLed
in the task's second tool call, after its first tool result is in the store; the second finds
the session in the store, resumes it (the model sees every earlier message) and finishes it.
Nothing is lost or written twice, and no transcript file is written on either "machine"."""

from __future__ import annotations

import json
import os
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

from batch_model import PARENT_ALIVE
from batch_support import batch_process

from queryloop.batch import RESUME_PROMPT, BatchTask, read_results, run_task
from queryloop.session.postgres_store import PostgresSessionStore
from queryloop.session.store import project_key, session_path
from queryloop.session.store_api import SessionKey
from queryloop.testing import MessagesServer, text, tool_use, turn


def store_options(dsn: str) -> tuple[str, ...]:
    """The options that put a batch's sessions in the database at `dsn`."""
    return ("--session-store", dsn, "--no-progress")


PROMPT = "Please do task t1 in two steps."


class TwoStepModel:
    """Step one runs `echo first-step`; step two waits in Bash while `hold` exists (the
    test kills the worker there); told to continue, it answers."""

    def __init__(self, folder: Path) -> None:
        self.started = folder / "second-step.started"
        self.hold = folder / "second-step.hold"

    def __call__(self, body: dict[str, Any]) -> Any:
        seen = json.dumps(body["messages"])
        if RESUME_PROMPT in seen:
            return turn(text("finished t1"))
        if "first-step" not in seen:
            return turn(text("Step one."), tool_use("Bash", {"command": "echo first-step"}))
        command = (
            f"touch {self.started}; while [ -e {self.hold} ] && {PARENT_ALIVE}; do sleep 0.05; done"
        )
        return turn(text("Step two."), tool_use("Bash", {"command": command}))


def tool_results(entries: list[dict[str, Any]]) -> list[str]:
    return [
        json.dumps(block.get("content"))
        for entry in entries
        if entry.get("record") == "message"
        for block in (entry["message"].get("content") or [])
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def test_a_task_killed_on_one_worker_resumes_on_another_from_postgres(
    tmp_path: Path, postgres_dsn: str
) -> None:
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "results.jsonl"
    tasks.write_text(json.dumps({"id": "t1", "prompt": PROMPT, "cwd": "w/t1"}) + "\n")
    session = BatchTask("t1", PROMPT).with_session(str(out.resolve())).session
    assert session is not None
    key = SessionKey(project_key=project_key(tmp_path / "w" / "t1"), session_id=session)
    store = PostgresSessionStore(postgres_dsn)
    model = TwoStepModel(tmp_path)
    model.hold.touch()
    with MessagesServer(model) as server:
        first = batch_process(tasks, out, server, tmp_path / "home-a", *store_options(postgres_dsn))
        try:
            deadline = time.monotonic() + 90
            while not (model.started.exists() and "first-step" in "".join(_results(store, key))):
                assert first.poll() is None, first.communicate()
                assert time.monotonic() < deadline, "the first worker never reached step two"
                time.sleep(0.05)
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            first.communicate()
        assert read_results(out) == {}
        before = len(server.requests)
        second = batch_process(
            tasks, out, server, tmp_path / "home-b", *store_options(postgres_dsn)
        )
        stdout, stderr = second.communicate(timeout=120)
        assert "1 resumed" in stdout, stdout
        assert second.returncode == 0, stderr
        resumed = server.requests[before:]

    result = read_results(out)["t1"]
    assert (result.terminal, result.text, result.attempts) == ("completed", "finished t1", 2)
    # One request on the second worker, and it carried the whole conversation so far: the
    # prompt, step one's result, step two's call answered as interrupted, the resume prompt.
    assert len(resumed) == 1
    seen = json.dumps(resumed[0]["messages"])
    assert PROMPT in seen and "first-step" in seen and RESUME_PROMPT in seen
    assert seen.count("tool_use_id") == 2
    # In the store, once each: no message lost or written twice.
    entries = store.load(key) or []
    uuids = [
        e["message"]["uuid"]
        for e in entries
        if e.get("record") == "message" and not e.get("partial")  # a draft is superseded
    ]
    assert [u for u, n in Counter(uuids).items() if n > 1] == []
    assert seen.count(PROMPT) == 1 and json.dumps(entries).count(RESUME_PROMPT) == 1
    # Neither "machine" kept a transcript file.
    assert not list(tmp_path.glob("home-*/projects/**/*.jsonl"))
    store.close()


def _results(store: PostgresSessionStore, key: SessionKey) -> list[str]:
    return tool_results(store.load(key) or [])


async def test_a_task_finished_in_the_store_is_not_run_again(
    tmp_path: Path, postgres_dsn: str
) -> None:
    # The batch reads a task's state from the store: a transcript that ends the task (a
    # real one, moved from its file into the store) gives the result without a model call.
    cwd, home = tmp_path / "w", tmp_path / "home"
    task = BatchTask("t1", "Say done.").with_session(str(tmp_path / "results.jsonl"))
    assert task.session is not None
    with MessagesServer(lambda body: turn(text("done"))) as server:
        options: dict[str, Any] = {
            "model": "claude-sonnet-5-5", "base_url": server.base_url, "cwd": cwd, "home": home
        }  # fmt: skip
        first = await run_task(task, options)
        transcript = session_path(task.session, cwd, home)
        records = [json.loads(line) for line in transcript.read_text().splitlines()]
        transcript.unlink()
        with PostgresSessionStore(postgres_dsn) as store:
            key = SessionKey(project_key=project_key(cwd), session_id=task.session)
            store.append(key, records)
        again = await run_task(task, {**options, "session_store": postgres_dsn})
        assert len(server.requests) == 1
    assert (first.terminal, first.text) == ("completed", "done")
    assert (again.terminal, again.text, again.turns) == ("completed", "done", first.turns)
    assert again.cost_usd == first.cost_usd and again.error is None
