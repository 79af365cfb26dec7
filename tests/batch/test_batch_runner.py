"""The batch runner runs sessions concurrently against the local server, isolates
failures, and resumes a task's session."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from queryloop.batch import BatchTask, run_batch, run_batch_on_ray
from queryloop.errors import ConfigError
from queryloop.testing import MessagesServer, text, turn


def echo_model(body: dict[str, Any]) -> Any:
    last = body["messages"][-1]["content"]
    words = " ".join(b.get("text", "") for b in last if b.get("type") == "text")
    return turn(text(f"answer to: {words.split()[-1]}"))


async def test_tasks_run_concurrently_and_report_in_order(tmp_path: Path) -> None:
    with MessagesServer(echo_model, event_delay=0.05) as server:
        options = {"model": "claude-sonnet-5-5", "base_url": server.base_url, "cwd": tmp_path}
        tasks = [BatchTask(f"t{i}", f"question {i}") for i in range(4)]
        loop = asyncio.get_running_loop()
        started = loop.time()
        results = await run_batch(tasks, concurrency=4, agent_options=options)
        elapsed = loop.time() - started
    assert [r.task_id for r in results] == ["t0", "t1", "t2", "t3"]
    assert [r.text for r in results] == [f"answer to: {i}" for i in range(4)]
    assert all(r.terminal == "completed" and r.session_id for r in results)
    assert len({r.session_id for r in results}) == 4
    arrivals = sorted(r.received_at for r in server.recorded)
    # All four requests arrived before the first reply could have finished streaming.
    assert arrivals[-1] - arrivals[0] < elapsed / 2


async def test_a_failing_task_does_not_stop_the_others(tmp_path: Path) -> None:
    with MessagesServer(echo_model) as server:
        options = {"model": "claude-sonnet-5-5", "base_url": server.base_url, "cwd": tmp_path}
        tasks = [
            BatchTask("good", "question one"),
            BatchTask("bad", "question two", options={"permission_mode": "no-such-mode"}),
        ]
        results = await run_batch(tasks, concurrency=2, agent_options=options)
    good, bad = results
    assert good.terminal == "completed"
    assert bad.terminal == "error" and bad.error and "no-such-mode" in bad.error


async def test_a_task_resumes_its_session(tmp_path: Path) -> None:
    with MessagesServer(echo_model) as server:
        options = {"model": "claude-sonnet-5-5", "base_url": server.base_url, "cwd": tmp_path}
        [first] = await run_batch([BatchTask("t", "hello alpha")], agent_options=options)
        [again] = await run_batch(
            [BatchTask("t", "and beta", resume=first.session_id)], agent_options=options
        )
    assert again.session_id == first.session_id
    assert "hello alpha" in str(server.requests[-1]["messages"])


def test_bad_concurrency_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="concurrency"):
        asyncio.run(run_batch([], concurrency=0))


def test_ray_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` sees without Ray
    with pytest.raises(ConfigError, match="Ray is not installed"):
        run_batch_on_ray([BatchTask("t", "x")])
