"""`queryloop batch` as a real process: results appended as tasks end, a summary at the end;
killed in the middle of a task and run again, it skips the finished ids and resumes the
interrupted task's session (the transcript is the source of truth)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from batch_model import BatchModel
from batch_support import batch_process

from queryloop.batch import BatchResult, BatchRun, BatchTask, ResultsFile, read_results, read_tasks
from queryloop.errors import ConfigError
from queryloop.testing import MessagesServer


def write_tasks(path: Path, count: int) -> None:
    lines = [
        json.dumps({"id": f"t{i:02d}", "prompt": f"Please do task t{i:02d}.", "cwd": f"w/t{i:02d}"})
        for i in range(count)
    ]
    path.write_text("\n".join(lines) + "\n")


def wait_for(predicate: object, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


@pytest.mark.slow
def test_killed_mid_task_and_run_again_it_resumes_and_skips_what_is_done(tmp_path: Path) -> None:
    tasks, out, home = tmp_path / "tasks.jsonl", tmp_path / "results.jsonl", tmp_path / "home"
    write_tasks(tasks, 4)
    model = BatchModel(tmp_path / "model")
    model.hold("t03")
    with MessagesServer(model) as server:
        first = batch_process(tasks, out, server, home)
        try:
            # t00..t02 finish; t03's Bash call is running: kill the whole batch process.
            wait_for(lambda: len(read_results(out)) == 3 and model.pids_of("t03") is not None)
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            first.communicate()
        model.release("t03")
        requests_before = len(server.requests)
        second = batch_process(tasks, out, server, home)
        stdout, stderr = second.communicate(timeout=120)
        assert second.returncode == 0, stderr
        new_requests = server.requests[requests_before:]
    results = read_results(out)
    assert sorted(results) == ["t00", "t01", "t02", "t03"]
    assert all(r.terminal == "completed" and r.error is None for r in results.values())
    assert results["t03"].text == "answer for t03" and results["t03"].attempts == 2
    # Only the interrupted task ran again: one request, after the repaired tool call.
    assert len(new_requests) == 1
    assert "interrupted" in json.dumps(new_requests[0]["messages"][-1])
    assert "4 of 4 tasks have results (3 from earlier runs)" in stdout
    assert "terminal reasons: completed 4" in stdout
    assert "cache hit rate" in stdout
    assert (tmp_path / "w" / "t03").is_dir()


def test_a_finished_session_is_not_run_again(tmp_path: Path) -> None:
    """Killed after the task ended but before its result line was written: the result is
    rebuilt from the transcript, without a model call."""
    model = BatchModel(tmp_path / "model")
    with MessagesServer(model) as server:
        options = {
            "model": "claude-sonnet-5-5",
            "base_url": server.base_url,
            "home": str(tmp_path / "home"),
            "permission_mode": "bypassPermissions",
        }
        tasks = [BatchTask("t01", "Please do task t01.", cwd=str(tmp_path / "w"))]
        out = tmp_path / "results.jsonl"
        run = BatchRun(tasks, results_path=out, agent_options=options, progress=False)
        run.run()
        first = read_results(out)["t01"]
        out.unlink()
        calls = len(server.requests)
        summary = BatchRun(tasks, results_path=out, agent_options=options, progress=False).run()
        assert len(server.requests) == calls
    again = read_results(out)["t01"]
    assert (again.terminal, again.text, again.session_id) == (
        first.terminal,
        first.text,
        first.session_id,
    )
    assert again.cost_usd == pytest.approx(first.cost_usd)
    assert summary.done == 1 and summary.failed == 0


def test_the_cost_cap_stops_new_tasks_and_a_rerun_goes_on(tmp_path: Path) -> None:
    model = BatchModel(tmp_path / "model")
    with MessagesServer(model) as server:
        options = {
            "model": "claude-sonnet-5-5",
            "base_url": server.base_url,
            "home": str(tmp_path / "home"),
            "permission_mode": "bypassPermissions",
        }
        tasks = [BatchTask(f"t{i}", f"Please do task t{i}.", cwd=str(tmp_path)) for i in range(4)]
        out = tmp_path / "results.jsonl"
        capped = BatchRun(
            tasks, results_path=out, concurrency=1, agent_options=options,
            cost_cap_usd=0.000001, progress=False,
        )  # fmt: skip
        summary = capped.run()
        assert summary.not_started == 3
        assert list(read_results(out)) == ["t0"]
        rest = BatchRun(
            tasks, results_path=out, concurrency=2, agent_options=options, progress=False
        )
        final = rest.run()
    assert sorted(read_results(out)) == ["t0", "t1", "t2", "t3"]
    assert final.skipped_before == 1 and final.done == 4 and final.not_started == 0


def test_tasks_file_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "a", "prompt": "x"}\n{"id": "b"}\n')
    with pytest.raises(ConfigError, match=r"tasks.jsonl:2: .*needs a `prompt`"):
        read_tasks(path)
    path.write_text('{"id": "a", "prompt": "x"}\n{"id": "a", "prompt": "y"}\n')
    with pytest.raises(ConfigError, match="appears twice"):
        read_tasks(path)
    path.write_text('{"id": "a", "prompt": "x", "colour": "red"}\n')
    with pytest.raises(ConfigError, match="colour"):
        read_tasks(path)


def test_relative_folders_are_taken_from_the_tasks_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "tasks.jsonl"
    path.parent.mkdir()
    path.write_text('{"id": "a", "prompt": "x", "cwd": "w/a", "copy_from": "tpl"}\n')
    [task] = read_tasks(path)
    assert task.cwd == str(tmp_path / "sub" / "w" / "a")
    assert task.copy_from == str(tmp_path / "sub" / "tpl")


def test_a_results_line_cut_by_a_kill_does_not_swallow_the_next(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    out.write_text('{"task_id": "a", "terminal": "completed"}\n{"task_id": "b", "term')
    ResultsFile(out).append(BatchResult("c", "completed"))
    assert sorted(read_results(out)) == ["a", "c"]
