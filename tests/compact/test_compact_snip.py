"""Snip: the oldest middle goes, head and tail stay, pairing stays valid."""

from __future__ import annotations

from compact_testkit import assert_valid, history, tool_round

from queryloop.compact import estimate_tokens, snip_history
from queryloop.compact.snip import is_snip_marker
from queryloop.messages import UserMessage


def test_disabled_snip_changes_nothing() -> None:
    msgs = history(20)
    out = snip_history(msgs, enabled=False, keep_head=1, keep_tail_tokens=100)
    assert out.messages == msgs and out.tokens_freed == 0


def test_snip_keeps_first_message_and_recent_tail_and_reports_freed() -> None:
    msgs = history(30)
    out = snip_history(msgs, enabled=True, keep_head=1, keep_tail_tokens=1_000)
    assert out.messages[0] is msgs[0]
    assert out.messages[-2:] == msgs[-2:]
    assert any(is_snip_marker(m) for m in out.messages)
    assert len(out.messages) < len(msgs)
    freed = estimate_tokens(msgs) - estimate_tokens(out.messages)
    assert out.tokens_freed == freed > 0
    assert_valid(out.messages)


def test_snip_twice_keeps_one_marker_with_cumulative_count() -> None:
    msgs = history(30)
    once = snip_history(msgs, enabled=True, keep_head=1, keep_tail_tokens=2_000)
    twice = snip_history(
        [*once.messages, *[m for n in range(100, 110) for m in tool_round(n)]],
        enabled=True,
        keep_head=1,
        keep_tail_tokens=1_000,
    )
    markers = [m for m in twice.messages if is_snip_marker(m)]
    assert len(markers) == 1
    assert isinstance(markers[0], UserMessage)
    assert_valid(twice.messages)


def test_snip_with_tail_larger_than_history_is_a_no_op() -> None:
    msgs = history(3)
    out = snip_history(msgs, enabled=True, keep_head=1, keep_tail_tokens=10**9)
    assert out.messages == msgs and out.tokens_freed == 0
