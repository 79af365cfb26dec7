"""Identity memos of the compaction pipeline: same results as the full computations, work
proportional to the new messages, and replaced messages that stay the same objects."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from compact_testkit import FakeSummarizer, history, tool_round, with_usage

import queryloop.compact.incremental as incremental
from queryloop.compact import CompactConfig, CompactionPipeline, estimate_tokens
from queryloop.compact.budget import apply_tool_result_budget
from queryloop.compact.incremental import StableView, TokenCounter, ToolNameIndex
from queryloop.compact.rounds import tool_names_by_id
from queryloop.compact.tokens import estimate_message_tokens
from queryloop.messages import Message, Usage, user_message


def test_token_counter_matches_estimate_tokens_and_counts_each_message_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[Message] = []
    original = estimate_message_tokens

    def counting(message: Message) -> int:
        calls.append(message)
        return original(message)

    monkeypatch.setattr(incremental, "estimate_message_tokens", counting)
    counter = TokenCounter()
    msgs = history(50)
    assert counter.total(msgs) == estimate_tokens(msgs)
    for n in range(50, 60):
        msgs = [*msgs, *tool_round(n)]
        assert counter.total(msgs) == estimate_tokens(msgs)
    assert len(calls) == len(msgs)  # every message estimated exactly once
    # A replaced history (compaction) is counted from scratch, still correctly.
    compacted = [user_message("summary"), *msgs[-4:]]
    assert counter.total(compacted) == estimate_tokens(compacted)
    shrunk = [*msgs[:-1], user_message("other")]
    assert counter.difference(msgs, shrunk) == estimate_tokens(msgs) - estimate_tokens(shrunk)
    assert counter.difference(msgs, msgs[:-2]) == estimate_tokens(msgs[-2:])


def test_tool_name_index_matches_full_scan() -> None:
    index = ToolNameIndex()
    msgs = history(5, tool="Bash")
    assert index.names(msgs) == tool_names_by_id(msgs)
    msgs = [*msgs, *tool_round(7, tool="Read")]
    assert index.names(msgs) == tool_names_by_id(msgs)
    other = history(2, tool="Grep")
    assert index.names(other) == tool_names_by_id(other)


def test_stable_view_budget_equals_full_run_and_keeps_spilled_objects(tmp_path: Path) -> None:
    big = "y" * 80_000
    msgs = history(3) + tool_round(3, result=big) + tool_round(4)
    view, decisions = StableView(), dict[str, str | None]()
    full_decisions = dict[str, str | None]()

    def run(part: list[Message] | tuple[Message, ...]) -> list[Message]:
        return apply_tool_result_budget(
            list(part), session_dir=tmp_path, per_tool_max_chars={}, cache=decisions
        ).messages

    first = view.update(msgs, None, lambda p: run(list(p)))
    for n in range(5, 9):
        msgs = [*msgs, *tool_round(n)]
        out = view.update(msgs, None, lambda p: run(list(p)))
        full = apply_tool_result_budget(
            msgs, session_dir=tmp_path, per_tool_max_chars={}, cache=full_decisions
        ).messages
        assert out == full
        # The spilled result is the very object of the first call: the request's
        # incremental normalizer recognises the unchanged history by identity.
        assert out[8] is first[8] and out[8] is not msgs[8]


async def test_pipeline_view_is_stable_across_iterations_after_a_cold_clear() -> None:
    clock = [time.time() + 3_600]
    cfg = CompactConfig(context_window=30_000, max_output_tokens=4_000, env={}, keep_recent=2)
    pipe = CompactionPipeline(
        cfg, summarize=FakeSummarizer(), session_dir=None, now=lambda: clock[0]
    )
    msgs = with_usage(history(30), Usage(input_tokens=12_000))
    first = await pipe.preprocess(msgs, None)
    clock[0] = time.time()
    msgs = [*msgs, *tool_round(99)]
    second = await pipe.preprocess(msgs, first.tracking)
    msgs = [*msgs, *tool_round(100)]
    third = await pipe.preprocess(msgs, second.tracking)
    old = second.messages_for_query
    assert all(a is b for a, b in zip(old, third.messages_for_query, strict=False))
    # Equal to what a fresh pipeline with the same sticky clears computes.
    fresh = CompactionPipeline(cfg, summarize=FakeSummarizer(), session_dir=None)
    fresh._cleared = set(pipe._cleared)
    again = await fresh.preprocess(msgs, None)
    assert again.messages_for_query == third.messages_for_query
