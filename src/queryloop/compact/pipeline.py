"""The compaction pipeline the query loop runs before every model call.

Order, cheapest and most local first — each stage runs only if still needed::

    tool-result budget -> snip -> microcompact -> collapse projection -> autocompact

Then the loop checks `PreprocessResult.at_blocking_limit`. On prompt-too-long it calls
`drain_collapses()` first (collapse_drain_retry), then `reactive()`.

When to shrink early is the configured `CompactionPolicy`'s call (`policy.py`): the default
never does; economy clears old tool results and summarises as soon as carrying them costs
more than shrinking (the pipeline measures the trade; the policy decides).

Token accounting across stages: the last response's usage still counts what snip,
microcompact and collapse removed from *earlier* messages, so the tokens each stage frees are
remembered against that response (its uuid) and subtracted until a newer response arrives.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import QueryloopError
from ..messages.types import Message
from ..providers.errors import PromptTooLongError
from .autocompact import AutoCompactTracking, CompactionResult, Summarize
from .budget import apply_tool_result_budget
from .collapse import CollapseStore
from .config import CompactConfig
from .incremental import StableView, TokenCounter, ToolNameIndex
from .microcompact import (
    CONTEXT_MANAGEMENT_BETA,
    clear_results,
    clearable_ids,
    is_cold,
    last_assistant_timestamp,
    microcompact,
)
from .policy import SummaryFacts, Trade
from .reactive import compact_with_retries, reactive_compact
from .restore import BELOW_THRESHOLD, RestoreContext, capped_restore
from .snip import snip_history
from .tokens import last_usage_index, token_count_with_estimation
from .trades import clearing_trade, summary_facts

NO_AUTOCOMPACT_SOURCES = frozenset({"compact", "session_memory"})


@dataclass(frozen=True, slots=True)
class PreprocessResult:
    """What the loop sends (`messages_for_query`), what it must persist and yield
    (`new_messages`, e.g. boundary + summary), and the numbers it may report."""

    messages_for_query: list[Message]
    new_messages: list[Message]
    tracking: AutoCompactTracking
    tokens_freed: int
    context_management: dict[str, Any] | None
    compacted: bool
    token_count: int = 0
    at_blocking_limit: bool = False
    above_warning: bool = False
    betas: tuple[str, ...] = ()
    compaction: CompactionResult | None = None


def _epoch(iso: str | None) -> float | None:
    if iso is None:
        return None
    try:
        return datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


class CompactionPipeline:
    """Per-session compaction state and stages (budget decisions, cleared ids and collapse
    spans are remembered so the bytes of earlier requests never change)."""

    def __init__(
        self,
        config: CompactConfig,
        *,
        summarize: Summarize,
        session_dir: Path | None,
        now: Callable[[], float] = time.time,
        cache_seconds: Callable[[], float] | None = None,
    ) -> None:
        self.policy = config.policy
        self.config = config.policy.configure(config)
        self.thresholds = self.config.thresholds()
        self._cache_seconds = cache_seconds
        """How long the cached prefix lives now (the request builder's cache lifetime);
        None: `config.cache_ttl_s`."""
        self._summarize = summarize
        self._session_dir = session_dir
        self._now = now
        self._budget_cache: dict[str, str | None] = {}
        self._cleared: set[str] = set()
        self._pending: list[tuple[str, int]] = []
        self.collapse = CollapseStore(keep_recent_rounds=config.collapse_keep_recent_rounds)
        self._last_view: list[Message] = []
        # Identity memos: per-iteration work stays proportional to the new messages.
        self._tokens = TokenCounter()
        self._names = ToolNameIndex()
        self._view_names = ToolNameIndex()
        self._budget_view = StableView()
        self._cleared_view = StableView()
        # Requests sent since the context last shrank: the policy's expected-requests estimate.
        self._since_summary = 0
        self._since_clearing = 0

    # -- token accounting -------------------------------------------------------------

    def token_count(self, messages: Sequence[Message]) -> int:
        """Tokens the next request holds: usage + estimate, minus what stages removed since
        that usage was reported."""
        index = last_usage_index(messages)
        if index is None:
            return self._tokens.total(messages)
        total = token_count_with_estimation(messages)
        anchor = messages[index].uuid
        return max(0, total - sum(t for a, t in self._pending if a == anchor))

    def _record_freed(self, messages: Sequence[Message], tokens: int) -> None:
        index = last_usage_index(messages)
        if index is None or tokens <= 0:
            return
        anchor = messages[index].uuid
        # Entries for older responses are obsolete: a newer usage already reflects them.
        self._pending = [(a, t) for a, t in self._pending if a == anchor]
        self._pending.append((anchor, tokens))

    def is_at_blocking_limit(self, messages: Sequence[Message]) -> bool:
        """Whether a request of `messages` is above the hard limit (terminal blocking_limit)."""
        return self.token_count(messages) >= self.thresholds.blocking

    def blocking_message(self, messages: Sequence[Message]) -> str:
        """Words for the user when the blocking limit is hit."""
        return (
            f"The conversation holds about {self.token_count(messages):,} tokens, above the "
            f"limit of {self.thresholds.blocking:,} for this model even after compaction. "
            "Run /compact (optionally with instructions) or start a new session."
        )

    # -- the stages ---------------------------------------------------------------------

    async def preprocess(
        self,
        messages: Sequence[Message],
        tracking: AutoCompactTracking | None,
        *,
        query_source: str = "main",
    ) -> PreprocessResult:
        """Run budget -> snip -> microcompact -> collapse -> autocompact on `messages`.
        `tracking` None (a query's first iteration) starts a fresh tracker."""
        tracking = (tracking or AutoCompactTracking()).next_turn()
        view, freed = self._cheap_stages(messages)
        view, context_management, freed2 = self._microcompact(view)
        view, freed3 = self._collapse(view)
        freed += freed2 + freed3
        count = self.token_count(view)
        compaction: CompactionResult | None = None
        if self._should_autocompact(view, count, tracking, query_source):
            compaction, tracking = await self._autocompact(view, tracking)
            if compaction is not None:
                view = list(compaction.messages)
                count = self._tokens.total(view)
        self._last_view = view
        self._since_summary += 1
        self._since_clearing += 1
        return PreprocessResult(
            messages_for_query=view,
            new_messages=list(compaction.messages) if compaction else [],
            tracking=tracking,
            tokens_freed=freed,
            context_management=context_management,
            compacted=compaction is not None,
            token_count=count,
            at_blocking_limit=count >= self.thresholds.blocking,
            above_warning=count >= self.thresholds.warning,
            betas=(CONTEXT_MANAGEMENT_BETA,) if context_management else (),
            compaction=compaction,
        )

    def _cheap_stages(self, messages: Sequence[Message]) -> tuple[list[Message], int]:
        cfg = self.config
        names = self._names.names(messages)

        def budget(part: Sequence[Message]) -> list[Message]:
            return apply_tool_result_budget(
                part,
                session_dir=self._session_dir,
                per_tool_max_chars=cfg.per_tool_max_chars,
                default_max_chars=cfg.default_max_chars,
                per_message_max_chars=cfg.per_message_max_chars,
                cache=self._budget_cache,
                names=names,
            ).messages

        view = self._budget_view.update(messages, None, budget)
        threshold = self.thresholds.autocompact
        if not cfg.snip_enabled or self.token_count(view) < cfg.snip_at_fraction * threshold:
            return view, 0
        snipped = snip_history(
            view,
            enabled=True,
            keep_head=cfg.snip_keep_head,
            keep_tail_tokens=int(cfg.snip_keep_tail_fraction * threshold),
        )
        self._record_freed(snipped.messages, snipped.tokens_freed)
        return snipped.messages, snipped.tokens_freed

    def _microcompact(
        self, view: list[Message]
    ) -> tuple[list[Message], dict[str, Any] | None, int]:
        cfg = self.config
        if not cfg.microcompact_enabled:
            return view, None, 0
        cleared = frozenset(self._cleared)
        baseline = self._cleared_view.update(view, cleared, lambda p: clear_results(p, cleared))
        gate = cfg.microcompact_at_fraction * self.thresholds.autocompact
        # Below the gate nothing needs clearing: no local edits, and no server-side
        # context-management parameter (a beta feature) on the request either.
        large = self.token_count(baseline) >= gate
        names = self._view_names.names(baseline)
        last_time = _epoch(last_assistant_timestamp(view))
        ttl_s = self._cache_seconds() if self._cache_seconds else cfg.cache_ttl_s
        result = microcompact(
            baseline,
            now=self._now(),
            last_assistant_time=last_time,
            cache_ttl_s=ttl_s,
            keep_recent=cfg.keep_recent,
            clearable_tools=cfg.clearable_tools,
            server_side=cfg.server_context_editing and large,
            server_trigger_tokens=self.thresholds.warning or self.thresholds.autocompact,
            server_clear_at_least=cfg.server_clear_at_least,
            clear_cold=large,
            names=names,
        )
        self._cleared.update(result.cleared_tool_use_ids)
        cold = is_cold(self._now(), last_time, ttl_s)
        view = self._clear_if_worth_it(result.messages, names, cold)
        freed = self._tokens.difference(baseline, view)
        self._record_freed(view, freed)
        return view, result.context_management, freed

    def _clear_if_worth_it(
        self, view: list[Message], names: dict[str, str], cold: bool
    ) -> list[Message]:
        """Clear old tool results now, although the cache may be warm and the context small,
        when the policy finds that cheaper than carrying them (the default never does)."""
        cfg = self.config
        ids: list[str] = []

        def trade() -> Trade:
            ids.extend(clearable_ids(view, names, cfg.clearable_tools, cfg.keep_recent))
            return clearing_trade(view, ids, cold=cold, tokens=self._tokens.message)

        if not self.policy.clear_now(trade, self._since_clearing):
            return view
        self._cleared.update(ids)
        self._since_clearing = 0
        return clear_results(view, ids)

    def _collapse(self, view: list[Message]) -> tuple[list[Message], int]:
        cfg = self.config
        if not cfg.collapse_enabled:
            return view, 0
        projected = self.collapse.project(view)
        threshold = self.thresholds.autocompact
        count = self.token_count(projected)
        if count < cfg.collapse_stage_fraction * threshold:
            self.collapse.staged = []
            return projected, 0
        self._stage(projected, count, int(cfg.collapse_target_fraction * threshold))
        if count < threshold or not self.collapse.drain():
            return projected, 0
        # At the threshold: commit the staged spans instead of summarizing everything.
        committed = self.collapse.project(projected)
        freed = self._tokens.difference(projected, committed)
        self._record_freed(committed, freed)
        return committed, freed

    def _stage(self, view: Sequence[Message], count: int, target: int) -> int:
        target_estimate = self._tokens.total(view) - max(0, count - target)
        return self.collapse.stage(view, target_estimate)

    def restore_context(self) -> RestoreContext:
        """The configured restoration budgets, capped relative to the threshold so that a
        compacted history always lands well below it, even for small windows."""
        return capped_restore(self.config.restore, self.thresholds.autocompact, BELOW_THRESHOLD)

    def _should_autocompact(
        self, view: list[Message], count: int, tracking: AutoCompactTracking, query_source: str
    ) -> bool:
        if (
            not self.config.autocompact_enabled
            or query_source in NO_AUTOCOMPACT_SOURCES
            or tracking.circuit_open
        ):
            return False
        if count >= self.thresholds.autocompact:
            return True
        return self.policy.summarize_now(
            lambda: self._summary_facts(view, count), self._since_summary
        )

    def _summary_facts(self, view: list[Message], count: int) -> SummaryFacts:
        cfg = self.config
        names = self._view_names.names(view)
        return summary_facts(
            view,
            request_tokens=count,
            clearable=clearable_ids(view, names, cfg.clearable_tools, cfg.keep_recent),
            restore=self.restore_context(),
            tokens=self._tokens.message,
        )

    def _shrunk(self) -> None:
        """After a summary (automatic, reactive or manual): a fresh history, fresh counts."""
        self.collapse.clear()
        self._since_summary = self._since_clearing = 0

    async def _autocompact(
        self, view: list[Message], tracking: AutoCompactTracking
    ) -> tuple[CompactionResult | None, AutoCompactTracking]:
        try:
            result = await compact_with_retries(
                view, summarize=self._summarize, restore=self.restore_context(), trigger="auto"
            )
        except QueryloopError:
            # The circuit breaker opens after MAX_CONSECUTIVE_FAILURES in a row.
            return None, tracking.failed()
        self._shrunk()
        return result, tracking.succeeded()

    # -- recovery and manual compact ---------------------------------------------------

    def project(self, messages: Sequence[Message]) -> list[Message]:
        """The collapse projection of `messages` (what a retry after a drain should send)."""
        return self.collapse.project(messages)

    async def drain_collapses(self) -> bool:
        """Commit staged collapses (staging the older half of the last view first if
        nothing was staged). The loop calls this on prompt-too-long before `reactive`."""
        if not self.config.collapse_enabled:
            return False
        view = self._last_view
        if not self.collapse.staged and view:
            self.collapse.stage(view, self._tokens.total(view) // 2)
        if not self.collapse.drain():
            return False
        projected = self.collapse.project(view)
        self._record_freed(projected, self._tokens.difference(view, projected))
        self._last_view = projected
        return True

    def learn_context_window(self, tokens: int) -> None:
        """Use a smaller context window than configured (the server's real one)."""
        if 0 < tokens < self.config.context_window:
            self.config = replace(self.config, context_window=tokens)
            self.thresholds = self.config.thresholds()

    async def reactive(
        self, messages: Sequence[Message], error: PromptTooLongError | None
    ) -> CompactionResult | None:
        """Compact after prompt-too-long (shrinking the compaction request if needed).

        When the error says what the server's window is and it is smaller than the
        configured one, the pipeline adopts it, so later turns compact before the server
        refuses them again."""
        if error is not None and error.max_tokens:
            self.learn_context_window(error.max_tokens)
        result = await reactive_compact(
            self.collapse.project(messages),
            summarize=self._summarize,
            restore=self.restore_context(),
            error=error,
        )
        if result is not None:
            self._shrunk()
        return result

    async def compact(
        self, messages: Sequence[Message], instructions: str | None = None
    ) -> CompactionResult:
        """A manual compact (the CLI's /compact), with optional instructions for the summary.
        Raises CompactionError or the provider's error when it fails."""
        result = await compact_with_retries(
            self.collapse.project(messages),
            summarize=self._summarize,
            restore=self.restore_context(),
            trigger="manual",
            custom_instructions=instructions,
        )
        self._shrunk()
        return result
