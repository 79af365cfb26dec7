"""Run many agent sessions at once: locally with asyncio, or on a Ray cluster.

    results = await run_batch([BatchTask("t1", "Fix the bug"), ...], concurrency=8,
                              agent_options={"model": "claude-sonnet-5-5", "max_turns": 30})
    results = run_batch_on_ray(tasks, address="ray://head:10001", agent_options=...)
    summary = BatchRun(read_tasks("tasks.jsonl"), results_path="results.jsonl").run()

Each task is one `Agent` in its own session; every message is in its transcript as it is
created, and the transcript is the source of truth: a task that died with its worker is
resumed (Ray retries it; a re-run of `BatchRun` or `queryloop batch` finds it), and a task
whose transcript shows it finished is not run again. Failures stay with their task: one broken
task never stops the batch. Ray is optional (`pip install queryloop[ray]`) and imported only
when a Ray address is given. See docs/batch.md.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .executors import (
    DEFAULT_RAY_CPUS,
    DEFAULT_RAY_RETRIES,
    BatchHooks,
    NoHooks,
    TransientTaskError,
    run_local,
    run_on_ray,
)
from .progress import BatchProgress, BatchSummary
from .run import BatchRun
from .runner import RESUME_PROMPT, inspect_session, run_task
from .tasks import BatchResult, BatchTask, ResultsFile, read_results, read_tasks

__all__ = [
    "RESUME_PROMPT",
    "BatchHooks",
    "BatchProgress",
    "BatchResult",
    "BatchRun",
    "BatchSummary",
    "BatchTask",
    "ResultsFile",
    "TransientTaskError",
    "inspect_session",
    "read_results",
    "read_tasks",
    "run_batch",
    "run_batch_on_ray",
    "run_task",
]


def _with_sessions(tasks: Iterable[BatchTask]) -> list[BatchTask]:
    # One namespace per call: each call starts new sessions, and a Ray retry within the
    # call resumes its task's session.
    namespace = uuid.uuid4().hex
    return [t.with_session(namespace) for t in tasks]


async def run_batch(
    tasks: Iterable[BatchTask],
    *,
    concurrency: int = 4,
    agent_options: Mapping[str, Any] | None = None,
    hooks: BatchHooks | None = None,
) -> list[BatchResult]:
    """Run `tasks` on this machine, at most `concurrency` at a time; results in task order."""
    results = await run_local(
        _with_sessions(tasks),
        dict(agent_options or {}),
        concurrency=concurrency,
        hooks=hooks or NoHooks(),
    )
    return [r for r in results if r is not None]


def run_batch_on_ray(
    tasks: Sequence[BatchTask],
    *,
    address: str | None = None,
    concurrency: int = 4,
    agent_options: Mapping[str, Any] | None = None,
    hooks: BatchHooks | None = None,
    max_retries: int = DEFAULT_RAY_RETRIES,
    num_cpus: float = DEFAULT_RAY_CPUS,
) -> list[BatchResult]:
    """Run `tasks` as Ray tasks (`address` of a cluster, or None for a local Ray), at most
    `concurrency` in flight; results in task order.

    Transcripts are written where `agent_options["home"]` (or the workers' QUERYLOOP_HOME)
    points: use a folder every worker shares to resume tasks on another machine.
    """
    results = run_on_ray(
        _with_sessions(tasks),
        dict(agent_options or {}),
        address=address,
        concurrency=concurrency,
        hooks=hooks or NoHooks(),
        max_retries=max_retries,
        num_cpus=num_cpus,
    )
    return [r for r in results if r is not None]
