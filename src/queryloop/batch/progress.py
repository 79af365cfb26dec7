"""The batch's live progress bar and its closing summary."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..messages.usage import Usage
from .tasks import BatchResult, BatchTask


@dataclass
class BatchSummary:
    """Counts, cost and cache use over a batch's results (including earlier runs')."""

    total: int = 0
    done: int = 0
    failed: int = 0
    skipped_before: int = 0
    """Tasks already in the results file when this run began."""
    not_started: int = 0
    """Tasks left out because the cost cap was reached."""
    terminals: Counter[str] = field(default_factory=Counter)
    cost_usd: float = 0.0
    usage: Usage = field(default_factory=Usage)
    resumed: int = 0
    interrupted: bool = False
    """The run was stopped by Ctrl-C (SIGINT) before every task had a result."""
    stopped: int = 0
    """Tasks that were running when the run was interrupted (a re-run resumes them)."""

    def add(self, result: BatchResult) -> None:
        """Count one result."""
        self.done += 1
        self.failed += int(result.failed)
        self.terminals[result.terminal] += 1
        self.cost_usd += result.cost_usd
        self.usage = self.usage + Usage.from_dict(result.usage)
        self.resumed += int(result.attempts > 1)

    @property
    def cache_hit_rate(self) -> float:
        """Cache reads over all prompt tokens."""
        prompt = self.usage.total_input_tokens
        return self.usage.cache_read_input_tokens / prompt if prompt else 0.0

    def render(self) -> str:
        """The closing summary, a few lines of text."""
        reasons = ", ".join(f"{k} {v}" for k, v in self.terminals.most_common()) or "none"
        lines = [
            f"batch: {self.done} of {self.total} tasks have results "
            f"({self.skipped_before} from earlier runs), {self.failed} failed, "
            f"{self.resumed} resumed after an interruption",
            f"terminal reasons: {reasons}",
            f"cost: ${self.cost_usd:.4f} · cache hit rate {self.cache_hit_rate:.1%} "
            f"({self.usage.cache_read_input_tokens:,} of "
            f"{self.usage.total_input_tokens:,} prompt tokens read from cache)",
        ]
        if self.interrupted:
            left = self.total - self.done - self.stopped
            lines.append(
                f"interrupted: {self.stopped} running tasks stopped, {left} not started "
                "(run again to resume them)"
            )
        elif self.not_started:
            lines.append(f"not started: {self.not_started} (cost cap reached; run again to go on)")
        return "\n".join(lines) + "\n"


class BatchProgress:
    """A rich progress bar: done / running / failed and the cost so far. Thread-safe (Ray
    results arrive on the driver thread, asyncio ones on the loop's)."""

    def __init__(self, total: int, *, enabled: bool = True, already: int = 0) -> None:
        self.total = total
        self.running = 0
        self.done = already
        self.failed = 0
        self.cost_usd = 0.0
        self._lock = threading.Lock()
        self._progress: Any = None
        self._task_id: Any = None
        if enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            self._progress = Progress(
                TextColumn("batch"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=False,
            )
            self._task_id = self._progress.add_task(
                "batch", total=total, completed=already, status=self._status()
            )

    def _status(self) -> str:
        return f"running {self.running} · failed {self.failed} · ${self.cost_usd:.4f}"

    def _refresh(self) -> None:
        if self._progress is not None:
            self._progress.update(self._task_id, completed=self.done, status=self._status())

    def __enter__(self) -> BatchProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def started(self, task: BatchTask) -> None:
        """One more task running."""
        with self._lock:
            self.running += 1
            self._refresh()

    def finished(self, result: BatchResult) -> None:
        """One task ended."""
        with self._lock:
            self.running = max(0, self.running - 1)
            self.done += 1
            self.failed += int(result.failed)
            self.cost_usd += result.cost_usd
            self._refresh()

    def finished_all(self, results: Iterable[BatchResult]) -> None:
        """Several results at once (those recovered from earlier runs)."""
        for result in results:
            self.cost_usd += result.cost_usd
            self.failed += int(result.failed)
        self._refresh()
