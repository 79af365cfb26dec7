"""Run many agent sessions at once: locally with asyncio, or on a Ray cluster.

    results = await run_batch([BatchTask("t1", "Fix the bug"), ...], concurrency=8,
                              agent_options={"model": "claude-sonnet-5-5", "max_turns": 30})
    results = run_batch_on_ray(tasks, address="ray://head:10001", agent_options=...)

Each task is one `Agent` in its own session; every message is in its transcript as it is
created, so a task that died with its worker can be resumed (`BatchTask.resume`). Failures
stay with their task: one broken task never stops the batch. Ray is optional
(`pip install queryloop[ray]`) and imported only by `run_batch_on_ray`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True)
class BatchTask:
    """One session to run: a prompt, and Agent options that override the batch's."""

    id: str
    prompt: str
    options: Mapping[str, Any] = field(default_factory=dict)
    resume: str | None = None
    """A session id to continue instead of starting a new session."""


@dataclass(frozen=True)
class BatchResult:
    """How one task ended. `error` is set when the task raised instead of ending normally."""

    task_id: str
    terminal: str
    text: str = ""
    session_id: str = ""
    turns: int = 0
    cost_usd: float = 0.0
    usage: Mapping[str, int] = field(default_factory=dict)
    duration_s: float = 0.0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (one line of a results file)."""
        return asdict(self)


async def run_task(task: BatchTask, agent_options: Mapping[str, Any]) -> BatchResult:
    """Run one task to its end in its own Agent; exceptions become an errored result."""
    from .agent import Agent

    options = {**agent_options, **task.options}
    model = options.pop("model", None)
    started = time.monotonic()
    agent = Agent.resume(task.resume, model, **options) if task.resume else Agent(model, **options)
    try:
        result = await agent.run(task.prompt)
    except Exception as exc:  # one task's failure must not end the batch
        return BatchResult(
            task_id=task.id,
            terminal="error",
            session_id=agent.session_id,
            duration_s=time.monotonic() - started,
            error=f"{type(exc).__name__}: {exc}",
        )
    finally:
        await agent.aclose()
    return BatchResult(
        task_id=task.id,
        terminal=result.terminal.value,
        text=result.text,
        session_id=result.session_id,
        turns=result.turns,
        cost_usd=result.cost_usd,
        usage=result.usage.to_dict(),
        duration_s=result.duration_s,
    )


async def run_batch(
    tasks: Iterable[BatchTask],
    *,
    concurrency: int = 4,
    agent_options: Mapping[str, Any] | None = None,
) -> list[BatchResult]:
    """Run `tasks` on this machine, at most `concurrency` at a time; results in task order."""
    if concurrency < 1:
        raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
    gate = asyncio.Semaphore(concurrency)
    base = dict(agent_options or {})

    async def one(task: BatchTask) -> BatchResult:
        async with gate:
            return await run_task(task, base)

    return list(await asyncio.gather(*(one(t) for t in tasks)))


def run_batch_on_ray(
    tasks: Sequence[BatchTask],
    *,
    address: str | None = None,
    concurrency: int = 4,
    agent_options: Mapping[str, Any] | None = None,
) -> list[BatchResult]:
    """Run `tasks` as Ray tasks (`address` of a cluster, or None for a local Ray).

    Each Ray task runs one session with asyncio inside its worker; at most `concurrency`
    run at once. Transcripts are written where the workers' QUERYLOOP_HOME points: use a
    shared folder to resume tasks from another machine.
    """
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            "Ray is not installed: pip install 'queryloop[ray]' (or run_batch() locally)"
        ) from exc
    if not ray.is_initialized():
        ray.init(address=address, ignore_reinit_error=True)
    base = dict(agent_options or {})
    remote = ray.remote(_run_in_worker)
    results: list[BatchResult] = []
    for start in range(0, len(tasks), max(1, concurrency)):
        chunk = tasks[start : start + max(1, concurrency)]
        results.extend(ray.get([remote.remote(task, base) for task in chunk]))
    return results


def _run_in_worker(task: BatchTask, agent_options: Mapping[str, Any]) -> BatchResult:
    return asyncio.run(run_task(task, agent_options))
