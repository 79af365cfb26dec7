"""`BatchRun`: a tasks file's tasks against a results file, resumable, with a cost cap.

    run = BatchRun(read_tasks("tasks.jsonl"), results_path="results.jsonl", concurrency=8)
    summary = run.run()           # asyncio here; ray_address="auto" for a Ray cluster

A re-run skips the ids already in the results file and resumes the tasks whose session
exists but did not finish (their session ids derive from the results file's path and the
task id, so the same batch finds the same sessions).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..session.store import queryloop_home
from ..session.store_api import SessionStore
from .executors import DEFAULT_RAY_CPUS, DEFAULT_RAY_RETRIES, run_local, run_on_ray
from .progress import BatchProgress, BatchSummary
from .tasks import BatchResult, BatchTask, ResultsFile, read_results


class BatchRun:
    """One run of a batch (see the module docstring)."""

    def __init__(
        self,
        tasks: Sequence[BatchTask],
        *,
        results_path: Path | str,
        concurrency: int = 4,
        agent_options: Mapping[str, Any] | None = None,
        cost_cap_usd: float | None = None,
        ray_address: str | None = None,
        ray_max_retries: int = DEFAULT_RAY_RETRIES,
        ray_num_cpus: float = DEFAULT_RAY_CPUS,
        progress: bool = True,
        session_store: str | SessionStore | None = None,
    ) -> None:
        if concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
        if cost_cap_usd is not None and cost_cap_usd < 0:
            raise ConfigError(f"the cost cap must not be negative, got {cost_cap_usd}")
        self.results = ResultsFile(results_path)
        namespace = str(self.results.path.resolve())
        self.tasks = [t.with_session(namespace) for t in tasks]
        options = dict(agent_options or {})
        # Workers write transcripts where the driver would: resumable from any of them.
        options.setdefault("home", str(queryloop_home(options.get("home"))))
        if session_store is not None:
            # Every worker's Agent writes there, and the runner reads the tasks' state from
            # there: a task killed on one machine resumes on another (docs/batch.md).
            options["session_store"] = session_store
        self.agent_options = options
        self.concurrency = concurrency
        self.cost_cap_usd = cost_cap_usd
        self.ray_address = ray_address
        self.ray_max_retries = ray_max_retries
        self.ray_num_cpus = ray_num_cpus
        self.progress_enabled = progress
        self.summary = BatchSummary(total=len(self.tasks))
        self._lock = threading.Lock()
        self._progress: BatchProgress | None = None
        self._running: set[str] = set()

    # ---- BatchHooks -----------------------------------------------------------------------

    def may_start(self) -> bool:
        """False once the results so far cost at least the cap."""
        with self._lock:
            cap = self.cost_cap_usd
            return cap is None or self.summary.cost_usd < cap

    def started(self, task: BatchTask) -> None:
        """Show it running."""
        with self._lock:
            self._running.add(task.id)
        if self._progress is not None:
            self._progress.started(task)

    def finished(self, result: BatchResult) -> None:
        """Append the result to the results file at once and count it."""
        with self._lock:
            self._running.discard(result.task_id)
            self.results.append(result)
            self.summary.add(result)
        if self._progress is not None:
            self._progress.finished(result)

    # ---- running --------------------------------------------------------------------------

    def pending(self) -> tuple[list[BatchTask], list[BatchResult]]:
        """(tasks still to run, results already in the results file)."""
        earlier = read_results(self.results.path)
        done = [earlier[t.id] for t in self.tasks if t.id in earlier]
        return [t for t in self.tasks if t.id not in earlier], done

    def run(self) -> BatchSummary:
        """Run what is left of the batch; the summary over all its results.

        Ctrl-C (KeyboardInterrupt) stops the run and still returns the summary, marked
        `interrupted`: the tasks it stopped have no result line, and their transcripts end
        in an aborted terminal, so a re-run resumes them (an interrupt is not an end)."""
        todo, done = self.pending()
        for result in done:
            self.summary.add(result)
        self.summary.skipped_before = len(done)
        with BatchProgress(
            len(self.tasks), enabled=self.progress_enabled, already=len(done)
        ) as progress:
            progress.finished_all(done)
            self._progress = progress
            try:
                outcomes = self._execute(todo)
            except KeyboardInterrupt:
                return self._interrupted()
            finally:
                self._progress = None
        self.summary.not_started = sum(1 for r in outcomes if r is None)
        return self.summary

    def _interrupted(self) -> BatchSummary:
        with self._lock:
            self.summary.interrupted = True
            self.summary.stopped = len(self._running)
            self.summary.not_started = self.summary.total - self.summary.done - len(self._running)
        return self.summary

    def _execute(self, todo: list[BatchTask]) -> list[BatchResult | None]:
        if not todo:
            return []
        if self.ray_address is not None:
            return run_on_ray(
                todo,
                self.agent_options,
                address=self.ray_address,
                concurrency=self.concurrency,
                hooks=self,
                max_retries=self.ray_max_retries,
                num_cpus=self.ray_num_cpus,
            )
        return asyncio.run(
            run_local(todo, self.agent_options, concurrency=self.concurrency, hooks=self)
        )
