"""The batch on a real local Ray against the local Messages server: 20 tasks, two workers
killed in the middle of their task, every task finishes, and the results equal the asyncio
runner's. Ray retries a task whose worker died; the retry resumes the same session."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_model import BatchModel

from queryloop.batch import BatchResult, BatchRun, BatchTask, run_batch, run_batch_on_ray
from queryloop.testing import MessagesServer

ray = pytest.importorskip("ray")

# Ray's start-up and twenty worker sessions on two cores: more than the suite's default.
# One xdist worker runs the whole module, so the module's local Ray starts once.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600), pytest.mark.xdist_group("ray")]
KILLED = ("t03", "t11")
TASKS = 20


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    started = time.monotonic()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"ANTHROPIC_API_KEY": "test-key"}},
    )
    print(f"\nray.init(num_cpus=2): {time.monotonic() - started:.1f}s")
    try:
        yield ray
    finally:
        ray.shutdown()


def make_tasks(root: Path, template: Path) -> list[BatchTask]:
    return [
        BatchTask(
            f"t{i:02d}",
            f"Please do task t{i:02d}.",
            cwd=str(root / "work" / f"t{i:02d}"),
            copy_from=str(template),
        )
        for i in range(TASKS)
    ]


def options(server: MessagesServer, home: Path) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-5-5",
        "base_url": server.base_url,
        "home": str(home),
        "permission_mode": "bypassPermissions",
        "max_turns": 5,
    }


class Killer(threading.Thread):
    """Kills the worker running each held task once its Bash call is under way."""

    def __init__(self, model: BatchModel, tasks: tuple[str, ...], home: Path) -> None:
        super().__init__(daemon=True)
        self.model = model
        self.home = home
        self.waiting = list(tasks)
        self.killed: dict[str, int] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        deadline = time.monotonic() + 240
        while self.waiting and not self.stop.is_set() and time.monotonic() < deadline:
            for task in list(self.waiting):
                pids = self.model.pids_of(task)
                if pids is None or not self._tool_call_persisted(task):
                    continue
                worker, bash = pids
                os.kill(worker, signal.SIGKILL)
                try:
                    os.killpg(bash, signal.SIGKILL)  # the Bash tool's own process group
                except ProcessLookupError:
                    pass
                self.killed[task] = worker
                self.model.release(task)
                self.waiting.remove(task)
            time.sleep(0.05)

    def _tool_call_persisted(self, task: str) -> bool:
        """The assistant's Bash call is in the task's transcript (so the kill lands in the
        middle of a recorded tool call, which resuming must repair)."""
        for path in self.home.glob("projects/*/*.jsonl"):
            text = path.read_text()
            if f"do task {task}." in text and '"type":"tool_use"' in text:
                return True
        return False


def by_id(results: list[BatchResult]) -> dict[str, tuple[str, str]]:
    return {r.task_id: (r.terminal, r.text) for r in results}


@pytest.fixture
def template(tmp_path: Path) -> Path:
    folder = tmp_path / "template"
    folder.mkdir()
    (folder / "task.txt").write_text("prepared for the task\n")
    return folder


def test_twenty_tasks_with_two_workers_killed_all_finish_like_asyncio(
    local_ray: Any, tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    model = BatchModel(tmp_path / "model")
    with MessagesServer(model) as server:
        local = tmp_path / "local"
        expected = _run_asyncio(make_tasks(local, template), options(server, local / "home"))
        on_ray = tmp_path / "ray"
        model.forget_pids()  # the asyncio run's pids are this process's own
        for task in KILLED:
            model.hold(task)
        killer = Killer(model, KILLED, on_ray / "home")
        killer.start()
        started = time.monotonic()
        try:
            results = run_batch_on_ray(
                make_tasks(on_ray, template),
                concurrency=4,
                agent_options=options(server, on_ray / "home"),
            )
        finally:
            killer.stop.set()
            killer.join()
        print(f"ray: {TASKS} tasks in {time.monotonic() - started:.1f}s")
    assert sorted(killer.killed) == list(KILLED)
    assert len(set(killer.killed.values())) == 2  # two different workers died
    assert [r.task_id for r in results] == [f"t{i:02d}" for i in range(TASKS)]
    assert all(r.error is None and r.terminal == "completed" for r in results), results
    assert by_id(results) == by_id(expected)
    assert by_id(results)["t03"] == ("completed", "answer for t03")
    resumed = {r.task_id for r in results if r.attempts > 1}
    assert resumed == set(KILLED)
    # Each task's folder was prepared for it before it ran.
    for i in range(TASKS):
        assert (on_ray / "work" / f"t{i:02d}" / "task.txt").is_file()
    # The retry resumed the same session: one transcript per task, the kill repaired in it.
    transcripts = sorted((on_ray / "home" / "projects").glob("*/*.jsonl"))
    assert len(transcripts) == TASKS
    killed_session = next(r.session_id for r in results if r.task_id == "t03")
    text = next(p for p in transcripts if p.stem == killed_session).read_text()
    assert '"repair":true' in text


def _run_asyncio(tasks: list[BatchTask], agent_options: dict[str, Any]) -> list[BatchResult]:
    import asyncio

    return asyncio.run(run_batch(tasks, concurrency=8, agent_options=agent_options))


def test_queryloop_batch_on_ray_with_a_cost_cap(
    local_ray: Any, tmp_path: Path, template: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BatchRun on Ray: results appended as tasks end; the cap stops new starts."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    model = BatchModel(tmp_path / "model")
    with MessagesServer(model) as server:
        tasks = make_tasks(tmp_path, template)[:6]
        out = tmp_path / "results.jsonl"
        run = BatchRun(
            tasks,
            results_path=out,
            concurrency=1,
            agent_options=options(server, tmp_path / "home"),
            cost_cap_usd=0.000001,
            ray_address="local",
            progress=False,
        )
        summary = run.run()
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["task_id"] for line in lines] == ["t00"]
    assert summary.not_started == 5 and summary.done == 1
    assert lines[0]["cost_usd"] > 0


class StoreKiller(Killer):
    """`Killer`, finding the task's recorded Bash call in a PostgreSQL store."""

    def __init__(self, model: BatchModel, tasks: tuple[str, ...], dsn: str) -> None:
        super().__init__(model, tasks, Path())
        self.dsn = dsn

    def _tool_call_persisted(self, task: str) -> bool:
        import psycopg

        with psycopg.connect(self.dsn) as conn:
            row = conn.execute(
                "SELECT count(*) FROM queryloop_session_entries WHERE entry::text LIKE %s "
                "AND session_id IN (SELECT session_id FROM queryloop_session_entries "
                "WHERE entry::text LIKE %s)",
                ('%"type": "tool_use"%', f"%do task {task}.%"),
            ).fetchone()
        return bool(row and row[0])


def test_a_ray_retry_resumes_from_a_postgres_store(
    local_ray: Any, tmp_path: Path, template: Path, postgres_cluster: Any
) -> None:
    """`--ray` with `--session-store postgresql://...`: the DSN travels to the workers, and
    the retry of a task whose worker was killed resumes its session from the database."""
    dsn = postgres_cluster.create_database()
    model = BatchModel(tmp_path / "model")
    model.hold("t01")
    killer = StoreKiller(model, ("t01",), dsn)
    with MessagesServer(model) as server:
        killer.start()
        try:
            summary = BatchRun(
                make_tasks(tmp_path, template)[:2],
                results_path=tmp_path / "results.jsonl",
                concurrency=2,
                agent_options=options(server, tmp_path / "home"),
                ray_address="local",
                progress=False,
                session_store=dsn,
            ).run()
        finally:
            killer.stop.set()
            killer.join()
    assert list(killer.killed) == ["t01"]
    assert (summary.done, summary.failed, summary.resumed) == (2, 0, 1)
    assert not list((tmp_path / "home").glob("projects/**/*.jsonl"))  # all in the database
