"""Benchmark: 100 short tasks on the asyncio runner and on a local Ray.

Each task is one real session (an `Agent`, its transcript, the Anthropic SDK over HTTP)
against the local Messages server (`queryloop.testing`): one prompt, one short answer. Both
runners get the same concurrency. Reported: wall time, tasks per second, the mean time a
task spent inside `run_task` (its session), and the overhead per task: the slot-time not
spent in a session, (wall × concurrency − Σ session time) / tasks — dispatch, serialization,
worker start-up and result collection. `ray.init` is timed on its own.

    python bench/batch.py [--tasks 100] [--concurrency 8] [--no-ray]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from queryloop.batch import BatchResult, BatchTask, run_batch, run_batch_on_ray
from queryloop.testing import MessagesServer, text, turn


def model(body: dict[str, Any]) -> Any:
    return turn(text("done"))


def tasks_for(count: int, root: Path) -> list[BatchTask]:
    return [BatchTask(f"t{i}", f"short task {i}", cwd=str(root)) for i in range(count)]


def report(name: str, wall: float, results: list[BatchResult], concurrency: int) -> None:
    inside = sum(r.duration_s for r in results)
    n = len(results)
    ok = sum(1 for r in results if r.terminal == "completed")
    overhead = (wall * concurrency - inside) / n
    print(
        f"{name:<8} {n} tasks ({ok} completed) in {wall:6.2f}s · {n / wall:5.1f} tasks/s · "
        f"session {inside / n * 1000:6.0f} ms mean · overhead {overhead * 1000:6.0f} ms/task"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--no-ray", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench-key")
    with tempfile.TemporaryDirectory() as tmp, MessagesServer(model) as server:
        root = Path(tmp)
        options = {"model": "claude-sonnet-5-5", "base_url": server.base_url}
        local = {**options, "home": str(root / "local")}
        started = time.perf_counter()
        results = asyncio.run(
            run_batch(
                tasks_for(args.tasks, root), concurrency=args.concurrency, agent_options=local
            )
        )
        report("asyncio", time.perf_counter() - started, results, args.concurrency)
        if args.no_ray:
            return
        import ray

        started = time.perf_counter()
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env={"env_vars": {"ANTHROPIC_API_KEY": "bench-key"}},
        )
        print(f"ray.init(num_cpus=2): {time.perf_counter() - started:.1f}s")
        try:
            on_ray = {**options, "home": str(root / "ray")}
            # Warm the workers once (their first import of queryloop and the SDK), then time.
            run_batch_on_ray(
                tasks_for(args.concurrency, root),
                concurrency=args.concurrency,
                agent_options=on_ray,
            )
            started = time.perf_counter()
            results = run_batch_on_ray(
                tasks_for(args.tasks, root), concurrency=args.concurrency, agent_options=on_ray
            )
            report("ray", time.perf_counter() - started, results, args.concurrency)
        finally:
            ray.shutdown()


if __name__ == "__main__":
    main()
