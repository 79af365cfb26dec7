"""Reactive compact: recover from prompt-too-long even when compacting is too long."""

from __future__ import annotations

import pytest
from compact_testkit import FakeSummarizer, all_text, assert_valid, history, tool_round

from queryloop.compact import (
    RestoreContext,
    estimate_tokens,
    reactive_compact,
    truncate_head_for_ptl_retry,
)
from queryloop.messages import user_message
from queryloop.providers.errors import PromptTooLongError, ServerError

FACT = "KIWI-42"


def _ptl(actual: int | None = None, limit: int | None = None) -> PromptTooLongError:
    return PromptTooLongError("prompt is too long", actual_tokens=actual, max_tokens=limit)


def test_truncate_drops_oldest_rounds_keeps_task_and_last_round() -> None:
    msgs = history(20)
    out = truncate_head_for_ptl_retry(msgs, 1_000)
    assert out is not None
    assert out[0] is msgs[0] and out[-2:] == msgs[-2:]
    assert estimate_tokens(msgs) - estimate_tokens(out) >= 1_000 - 50
    assert len(out) < len(msgs)
    assert_valid(out)
    everything = truncate_head_for_ptl_retry(msgs, 10**9)
    assert everything is not None and everything[-2:] == msgs[-2:]
    assert_valid(everything)
    assert truncate_head_for_ptl_retry(history(1), 10) is None  # nothing droppable


async def test_compaction_request_too_long_is_shrunk_and_retried() -> None:
    msgs = history(40)
    fake = FakeSummarizer("<summary>ok</summary>")
    fake.errors = [_ptl(actual=estimate_tokens(msgs) + 500, limit=estimate_tokens(msgs) - 3_000)]
    result = await reactive_compact(
        msgs, summarize=fake, restore=RestoreContext(keep_tail_tokens=300), error=_ptl()
    )
    assert result is not None and result.trigger == "reactive"
    first_input, second_input = fake.calls[0][0], fake.calls[1][0]
    assert first_input == msgs
    assert len(second_input) < len(first_input)
    # Enough was dropped for the reported overflow (3,500 tokens + a margin).
    assert estimate_tokens(first_input) - estimate_tokens(second_input) >= 3_500
    assert FACT in str(second_input[0])  # the task is never dropped
    assert result.dropped_messages > 0
    assert FACT in all_text(result.messages)
    assert_valid(second_input)
    assert_valid(result.messages)


async def test_unknown_overflow_drops_a_fraction_each_retry() -> None:
    msgs = history(40)
    fake = FakeSummarizer()
    fake.errors = [_ptl(), _ptl()]
    result = await reactive_compact(msgs, summarize=fake, restore=RestoreContext(), error=None)
    assert result is not None
    sizes = [estimate_tokens(given) for given, _ in fake.calls]
    assert sizes[0] > sizes[1] > sizes[2]


async def test_gives_up_after_bounded_retries_and_returns_none() -> None:
    msgs = history(40)
    fake = FakeSummarizer()
    fake.errors = [_ptl() for _ in range(10)]
    assert (
        await reactive_compact(msgs, summarize=fake, restore=RestoreContext(), error=None) is None
    )
    assert len(fake.calls) == 4  # one attempt and three shrinking retries
    fake.errors = [ServerError("boom", status=500)]
    assert (
        await reactive_compact(msgs, summarize=fake, restore=RestoreContext(), error=None) is None
    )


async def test_a_bug_in_summarize_is_not_swallowed() -> None:
    fake = FakeSummarizer()
    fake.errors = [ValueError("bug")]
    with pytest.raises(ValueError):
        await reactive_compact(history(3), summarize=fake, restore=RestoreContext(), error=None)


async def test_user_words_from_dropped_rounds_are_still_restored() -> None:
    msgs = [*history(10), user_message("MIDDLE-NOTE: never touch the CLI.")]
    for n in range(100, 130):
        msgs += tool_round(n)
    fake = FakeSummarizer()
    fake.errors = [_ptl(actual=estimate_tokens(msgs), limit=estimate_tokens(msgs) // 3)]
    result = await reactive_compact(
        msgs, summarize=fake, restore=RestoreContext(keep_tail_tokens=300), error=None
    )
    assert result is not None
    assert "MIDDLE-NOTE" not in str(fake.calls[1][0])  # dropped from the retried request
    assert "MIDDLE-NOTE" in all_text(result.messages)  # but the user's words survive
    assert FACT in all_text(result.messages)
    assert_valid(result.messages)
