"""Where tasks run: asyncio on this machine, or Ray tasks on a cluster.

Both take tasks that already have their session ids (so a retried task resumes the same
session), start at most `concurrency` at a time, ask `hooks.may_start()` before each start
(the cost cap) and report each start and result as it happens.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ..errors import ConfigError, QueryloopError
from .runner import run_task
from .tasks import BatchResult, BatchTask

DEFAULT_RAY_RETRIES = 3
DEFAULT_RAY_CPUS = 0.25
"""A session waits on the network almost all the time: four per core by default."""


class BatchHooks(Protocol):
    """What a runner tells the batch, and asks it."""

    def may_start(self) -> bool:
        """False once no further task may start (the cost cap was reached)."""
        ...

    def started(self, task: BatchTask) -> None:
        """A task was started (on Ray: submitted)."""
        ...

    def finished(self, result: BatchResult) -> None:
        """A task ended; its result is final."""
        ...


class NoHooks:
    """Start everything, report nothing."""

    def may_start(self) -> bool:
        """Always True."""
        return True

    def started(self, task: BatchTask) -> None:
        """Nothing to do."""

    def finished(self, result: BatchResult) -> None:
        """Nothing to do."""


def _check_concurrency(concurrency: int) -> None:
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")


async def run_local(
    tasks: Sequence[BatchTask],
    agent_options: Mapping[str, Any],
    *,
    concurrency: int,
    hooks: BatchHooks,
) -> list[BatchResult | None]:
    """Run `tasks` with asyncio; None for a task that was not started (cost cap)."""
    _check_concurrency(concurrency)
    gate = asyncio.Semaphore(concurrency)

    async def one(task: BatchTask) -> BatchResult | None:
        async with gate:
            if not hooks.may_start():
                return None
            hooks.started(task)
            result = await run_task(task, agent_options)
            hooks.finished(result)
            return result

    return list(await asyncio.gather(*(one(t) for t in tasks)))


class TransientTaskError(QueryloopError):
    """Raised inside a Ray worker for a transient failure so that Ray retries the task;
    the retry resumes the same session."""

    def __init__(self, result: BatchResult) -> None:
        super().__init__(result.error or "transient failure")
        self.result = result


def _run_in_worker(task: BatchTask, agent_options: Mapping[str, Any]) -> BatchResult:
    result = asyncio.run(run_task(task, agent_options))
    if result.error is not None and result.error.startswith("retryable:"):
        raise TransientTaskError(result)
    return result


def run_on_ray(
    tasks: Sequence[BatchTask],
    agent_options: Mapping[str, Any],
    *,
    address: str | None,
    concurrency: int,
    hooks: BatchHooks,
    max_retries: int = DEFAULT_RAY_RETRIES,
    num_cpus: float = DEFAULT_RAY_CPUS,
) -> list[BatchResult | None]:
    """Run `tasks` as Ray tasks, at most `concurrency` in flight; None for a task not started.

    A worker that dies (killed, OOM, node lost) or a transient provider failure makes Ray run
    the task again, up to `max_retries` times; the new attempt resumes the session."""
    _check_concurrency(concurrency)
    ray = _import_ray()
    if not ray.is_initialized():
        _init_ray(ray, address)
    remote = ray.remote(
        max_retries=max_retries,
        retry_exceptions=[TransientTaskError],
        num_cpus=num_cpus,
    )(_run_in_worker)
    queue = deque(enumerate(tasks))
    pending: dict[Any, tuple[int, BatchTask]] = {}
    results: list[BatchResult | None] = [None] * len(tasks)
    while queue or pending:
        while queue and len(pending) < concurrency and hooks.may_start():
            index, task = queue.popleft()
            pending[remote.remote(task, dict(agent_options))] = (index, task)
            hooks.started(task)
        if not pending:
            break
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            index, task = pending.pop(ref)
            result = _collect(ray, ref, task)
            results[index] = result
            hooks.finished(result)
    return results


def _collect(ray: Any, ref: Any, task: BatchTask) -> BatchResult:
    try:
        result: BatchResult = ray.get(ref)
        return result
    except Exception as exc:  # retries exhausted, or Ray itself failed the task
        cause = getattr(exc, "cause", None)
        if isinstance(cause, TransientTaskError):
            return cause.result
        return BatchResult(
            task_id=task.id,
            terminal="error",
            session_id=task.session or "",
            error=f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}",
        )


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "Ray is not installed: pip install 'queryloop[ray]' (or run the batch locally)"
        ) from exc
    return ray


def _init_ray(ray: Any, address: str | None) -> None:
    """`None`/"local": start a Ray on this machine; "auto" or "ray://host:port": connect."""
    if address in (None, "", "local"):
        ray.init(include_dashboard=False, ignore_reinit_error=True)
    else:
        ray.init(address=address, ignore_reinit_error=True)
