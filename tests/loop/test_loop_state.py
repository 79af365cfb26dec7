"""The next State: every field carries over unless a reset declared in `State` names it."""

from __future__ import annotations

from dataclasses import fields, replace

from queryloop.compact import AutoCompactTracking
from queryloop.loop import Continue, State
from queryloop.loop.summaries import PendingSummaries
from queryloop.messages.constructors import user_message

RESET_EACH_ITERATION = {"max_output_tokens_override": None, "stop_hook_active": False}
RESET_EACH_TURN = {"max_output_tokens_recovery_count": 0, "has_attempted_reactive_compact": False}


def _busy_state() -> State:
    """A State with no field at its default."""
    return State(
        messages=(user_message("before"),),
        model="big",
        autocompact_tracking=AutoCompactTracking(compacted=True, turn_counter=2),
        max_output_tokens_recovery_count=2,
        has_attempted_reactive_compact=True,
        max_output_tokens_override=64_000,
        pending_tool_use_summary=PendingSummaries(),
        stop_hook_active=True,
        turn_count=3,
        transition=Continue.STOP_HOOK_BLOCKING,
        budget_continuations=4,
        output_tokens=1_234,
    )


def test_continued_resets_only_what_holds_for_one_request() -> None:
    state = _busy_state()
    after = [user_message("after")]
    nxt = state.continued(Continue.TOKEN_BUDGET_CONTINUATION, after)
    assert nxt.messages == tuple(after)
    assert nxt.transition is Continue.TOKEN_BUDGET_CONTINUATION
    for f in fields(State):
        if f.name in ("messages", "transition"):
            continue
        expected = RESET_EACH_ITERATION.get(f.name, getattr(state, f.name))
        assert getattr(nxt, f.name) == expected, f.name


def test_next_turn_also_resets_what_holds_for_one_turn_and_counts_it() -> None:
    state = _busy_state()
    nxt = state.next_turn([user_message("after")])
    assert nxt.transition is Continue.NEXT_TURN
    assert nxt.turn_count == state.turn_count + 1
    resets = {**RESET_EACH_ITERATION, **RESET_EACH_TURN}
    for f in fields(State):
        if f.name in ("messages", "transition", "turn_count"):
            continue
        expected = resets.get(f.name, getattr(state, f.name))
        assert getattr(nxt, f.name) == expected, f.name


def test_a_site_changes_what_its_reason_changes_on_top() -> None:
    state = replace(_busy_state(), has_attempted_reactive_compact=False)
    nxt = replace(
        state.continued(Continue.REACTIVE_COMPACT_RETRY, state.messages),
        has_attempted_reactive_compact=True,
    )
    assert nxt.has_attempted_reactive_compact
    assert nxt.autocompact_tracking == state.autocompact_tracking
