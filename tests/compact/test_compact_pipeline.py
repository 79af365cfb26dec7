"""The pipeline as the loop uses it: stage order, thresholds, recovery, invariants."""

from __future__ import annotations

import time
from pathlib import Path

from compact_testkit import FakeSummarizer, all_text, assert_valid, history, tool_round, with_usage

from queryloop.compact import (
    CLEARED_PLACEHOLDER,
    AutoCompactTracking,
    CompactConfig,
    CompactionPipeline,
    RestoreContext,
    estimate_tokens,
)
from queryloop.messages import Message, SystemMessage, SystemSubtype, Usage
from queryloop.providers.errors import PromptTooLongError, ServerError

FACT = "KIWI-42"
# A 30k window with 4k output: effective 26k, autocompact at 13k, blocking at 23k.
SMALL = {"context_window": 30_000, "max_output_tokens": 4_000, "env": {}}


def _pipeline(
    fake: FakeSummarizer, tmp_path: Path | None = None, **kw: object
) -> CompactionPipeline:
    cfg = CompactConfig(**{**SMALL, "restore": RestoreContext(keep_tail_tokens=400), **kw})  # type: ignore[arg-type]
    return CompactionPipeline(cfg, summarize=fake, session_dir=tmp_path)


def _at(tokens: int, rounds: int = 30) -> list[Message]:
    return with_usage(history(rounds), Usage(input_tokens=tokens))


async def test_below_every_threshold_nothing_changes() -> None:
    fake = FakeSummarizer()
    pipe = _pipeline(fake)
    msgs = _at(2_000)
    out = await pipe.preprocess(msgs, None)  # the loop's initial State holds None
    assert out.messages_for_query == msgs and not out.compacted and out.new_messages == []
    assert fake.calls == []
    assert out.context_management is None  # small: no beta parameter on the request
    assert out.betas == ()
    assert not out.at_blocking_limit


async def test_large_warm_history_offers_server_side_clearing() -> None:
    pipe = _pipeline(FakeSummarizer())
    out = await pipe.preprocess(_at(8_000), None)  # above half the 13k threshold, warm cache
    assert out.context_management is not None
    assert out.betas == ("context-management-2025-06-27",)


async def test_above_threshold_autocompacts_and_keeps_the_task() -> None:
    fake = FakeSummarizer("<summary>working on the parser</summary>")
    pipe = _pipeline(fake, collapse_enabled=False)
    msgs = _at(20_000)
    out = await pipe.preprocess(msgs, AutoCompactTracking())
    assert out.compacted and len(fake.calls) == 1
    assert fake.calls[0][0] == msgs  # the summary request is the normal history
    assert out.new_messages == out.messages_for_query
    first = out.messages_for_query[0]
    assert isinstance(first, SystemMessage) and first.subtype is SystemSubtype.COMPACT_BOUNDARY
    assert out.tracking.compacted and out.tracking.consecutive_failures == 0
    assert out.token_count < pipe.thresholds.autocompact
    assert FACT in all_text(out.messages_for_query)
    assert_valid(out.messages_for_query)


async def test_circuit_breaker_stops_after_three_failures() -> None:
    fake = FakeSummarizer()
    fake.errors = [ServerError("down", status=500) for _ in range(10)]
    pipe = _pipeline(fake, collapse_enabled=False)
    tracking = AutoCompactTracking()
    msgs = _at(20_000)
    for _ in range(5):
        out = await pipe.preprocess(msgs, tracking)
        tracking = out.tracking
        assert out.messages_for_query == msgs and not out.compacted
    assert len(fake.calls) == 3 and tracking.circuit_open
    assert out.at_blocking_limit is False


async def test_blocking_limit_when_nothing_can_bring_it_down() -> None:
    pipe = _pipeline(FakeSummarizer(), autocompact_enabled=False, collapse_enabled=False)
    msgs = _at(24_000)
    out = await pipe.preprocess(msgs, AutoCompactTracking())
    assert out.at_blocking_limit and pipe.is_at_blocking_limit(msgs)
    assert "23,000" in pipe.blocking_message(msgs)
    assert not pipe.is_at_blocking_limit(_at(5_000))


async def test_snip_tokens_freed_are_subtracted_before_the_autocompact_check() -> None:
    fake = FakeSummarizer()
    pipe = _pipeline(fake, snip_enabled=True, collapse_enabled=False, snip_keep_tail_fraction=0.1)
    msgs = _at(14_000, rounds=60)  # just over the 13k threshold
    out = await pipe.preprocess(msgs, AutoCompactTracking())
    assert out.tokens_freed > 1_000
    assert not out.compacted and fake.calls == []
    assert out.token_count < pipe.thresholds.autocompact
    assert FACT in all_text(out.messages_for_query)
    assert_valid(out.messages_for_query)


async def test_cold_cache_microcompact_clears_old_results_and_counts_it() -> None:
    fake = FakeSummarizer()
    cfg = {**SMALL, "collapse_enabled": False, "keep_recent": 2}
    clock = [time.time() + 3_600]  # an hour after the last response: the cache is cold
    pipe = CompactionPipeline(
        CompactConfig(**cfg),  # type: ignore[arg-type]
        summarize=fake,
        session_dir=None,
        now=lambda: clock[0],
    )
    msgs = _at(12_000, rounds=30)
    out = await pipe.preprocess(msgs, AutoCompactTracking())
    text = all_text(out.messages_for_query)
    assert text.count(CLEARED_PLACEHOLDER) == 28
    assert "result 29" in text and "result 28" in text  # the latest results stay verbatim
    assert out.context_management is None and out.tokens_freed > 0
    assert out.token_count == 12_000 + estimate_tokens(msgs[-1:]) - out.tokens_freed
    assert_valid(out.messages_for_query)
    # Next turn, cache warm again: earlier clears are sticky, nothing new is cleared.
    clock[0] = time.time()
    again = await pipe.preprocess([*msgs, *tool_round(99)], out.tracking)
    assert all_text(again.messages_for_query).count(CLEARED_PLACEHOLDER) == 28
    assert again.context_management is not None


async def test_collapse_commits_at_threshold_instead_of_summarizing() -> None:
    fake = FakeSummarizer()
    pipe = _pipeline(fake)
    msgs = _at(13_500, rounds=40)
    out = await pipe.preprocess(msgs, AutoCompactTracking())
    assert fake.calls == [] and not out.compacted
    assert out.token_count < pipe.thresholds.autocompact
    assert len(out.messages_for_query) < len(msgs)
    assert out.messages_for_query[0] is msgs[0]
    assert_valid(out.messages_for_query)


async def test_drain_on_prompt_too_long_then_reactive() -> None:
    fake = FakeSummarizer("<summary>s</summary>")
    pipe = _pipeline(fake)
    msgs = _at(3_000, rounds=40)  # the client believes it is small
    first = await pipe.preprocess(msgs, AutoCompactTracking())
    assert first.messages_for_query == msgs
    assert await pipe.drain_collapses() is True  # collapse_drain_retry
    retry = await pipe.preprocess(msgs, first.tracking)
    assert len(retry.messages_for_query) < len(msgs)
    assert_valid(retry.messages_for_query)
    result = await pipe.reactive(retry.messages_for_query, PromptTooLongError("too long"))
    assert result is not None and FACT in all_text(result.messages)
    assert_valid(result.messages)


async def test_manual_compact_passes_instructions() -> None:
    fake = FakeSummarizer()
    pipe = _pipeline(fake)
    result = await pipe.compact(_at(1_000), "keep the test names")
    assert fake.calls[0][1].endswith("keep the test names")
    assert result.trigger == "manual"


async def test_every_stage_output_is_valid_over_a_growing_session(tmp_path: Path) -> None:
    fake = FakeSummarizer("<summary>progress so far</summary>")
    pipe = _pipeline(fake, tmp_path, snip_enabled=True, default_max_chars=3_000)
    tracking = AutoCompactTracking()
    msgs: list[Message] = history(1)
    for n in range(1, 120):
        big = "y" * (6_000 if n % 7 == 0 else 900)
        msgs = [*msgs, *tool_round(n, tool="Bash" if n % 2 else "Read", result=big)]
        out = await pipe.preprocess(msgs, tracking)
        tracking = out.tracking
        assert_valid(out.messages_for_query)
        assert FACT in all_text(out.messages_for_query)
        assert not out.at_blocking_limit
        # The loop carries the query view forward, with usage of the next response.
        msgs = with_usage(out.messages_for_query, Usage(input_tokens=out.token_count))
    assert (tmp_path / "tool-results").exists()
    assert len(fake.calls) >= 2  # the session really went through several compactions


async def test_restoration_budgets_shrink_with_a_small_window(tmp_path: Path) -> None:
    files = []
    for n in range(5):
        path = tmp_path / f"big{n}.py"
        path.write_text("z" * 40_000)
        files.append(str(path))
    fake = FakeSummarizer()
    restore = RestoreContext(recent_files=files, keep_tail_tokens=20_000)
    pipe = CompactionPipeline(
        CompactConfig(**{**SMALL, "restore": restore, "collapse_enabled": False}),  # type: ignore[arg-type]
        summarize=fake,
        session_dir=None,
    )
    out = await pipe.preprocess(_at(20_000), AutoCompactTracking())
    assert out.compacted
    # 5 files of 10k tokens each would not fit a 13k threshold: the budgets are capped.
    assert out.token_count < pipe.thresholds.autocompact * 0.6
