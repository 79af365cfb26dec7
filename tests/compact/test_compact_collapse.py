"""Context collapse: a projection over the array; the array itself never changes."""

from __future__ import annotations

from compact_testkit import assert_valid, history, tool_round

from queryloop.compact import CollapseStore, estimate_tokens
from queryloop.compact.collapse import COLLAPSE_HEADER
from queryloop.messages import UserMessage


def test_stage_does_not_change_the_view_until_drained() -> None:
    msgs = history(20)
    store = CollapseStore(keep_recent_rounds=4)
    assert store.stage(msgs, estimate_tokens(msgs) // 2) > 0
    assert store.project(msgs) == msgs
    assert store.drain() is True
    view = store.project(msgs)
    assert estimate_tokens(view) <= estimate_tokens(msgs) // 2 + 200
    assert view[0] is msgs[0] and view[-8:] == msgs[-8:]  # head and recent rounds intact
    summaries = [m for m in view if isinstance(m, UserMessage) and m.is_meta]
    assert len(summaries) == 1 and COLLAPSE_HEADER in str(summaries[0].content)
    assert "Read(/src/f0.py)" in str(summaries[0].content)
    assert_valid(view)
    assert store.drain() is False  # nothing staged any more


def test_projection_is_stable_and_survives_new_messages() -> None:
    msgs = history(20)
    store = CollapseStore(keep_recent_rounds=2)
    store.stage(msgs, 0)
    store.drain()
    first = store.project(msgs)
    later = store.project([*msgs, *tool_round(99)])
    assert later[: len(first)] == first  # same bytes for the prefix: cache-friendly
    assert store.project(first) == first  # projecting a projected view is a no-op


def test_second_collapse_absorbs_the_first_summary() -> None:
    msgs = history(30)
    store = CollapseStore(keep_recent_rounds=3)
    store.stage(msgs, estimate_tokens(msgs) - 2_000)
    store.drain()
    grown = [*msgs, *(m for n in range(100, 110) for m in tool_round(n))]
    store.stage(grown, estimate_tokens(store.project(grown)) - 2_000)
    store.drain()
    view = store.project(grown)
    summaries = [m for m in view if isinstance(m, UserMessage) and m.is_meta]
    assert len(summaries) == 1
    assert "f0.py" in str(summaries[0].content)  # the oldest step's line carried over
    assert_valid(view)


def test_nothing_to_stage_below_target() -> None:
    msgs = history(3)
    store = CollapseStore()
    assert store.stage(msgs, 10**9) == 0 and store.drain() is False
