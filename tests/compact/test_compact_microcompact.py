"""Microcompact: local clearing when the cache is cold, server-side config while warm."""

from __future__ import annotations

from compact_testkit import assert_valid, history, tool_round

from queryloop.compact import (
    CLEARED_PLACEHOLDER,
    CONTEXT_MANAGEMENT_BETA,
    microcompact,
)
from queryloop.compact.budget import result_text
from queryloop.messages import Message, ToolResultBlock, UserMessage


def _results(messages: list[Message]) -> list[tuple[str, str]]:
    return [
        (b.tool_use_id, result_text(b))
        for m in messages
        if isinstance(m, UserMessage) and not isinstance(m.content, str)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]


def _mixed() -> list[Message]:
    msgs = history(6)  # Read results toolu_0000..0005
    msgs += tool_round(50, tool="Edit", result="edited ok")  # not clearable
    msgs += tool_round(51, tool="Bash", result="latest bash output")
    return msgs


def test_cold_cache_clears_all_but_recent_clearable_results() -> None:
    msgs = _mixed()
    out = microcompact(msgs, now=10_000.0, last_assistant_time=1_000.0, keep_recent=2)
    results = dict(_results(out.messages))
    cleared = [i for i, text in results.items() if text == CLEARED_PLACEHOLDER]
    assert cleared == [f"toolu_{n:04d}" for n in range(5)]
    assert out.cleared_tool_use_ids == tuple(cleared)
    assert results["toolu_0005"].startswith("result 5")  # among the 2 most recent clearable
    assert results["toolu_0051"] == "latest bash output"  # the latest result stays verbatim
    assert results["toolu_0050"] == "edited ok"  # Edit is not clearable
    assert_valid(out.messages)
    assert out.context_management is None


def test_warm_cache_keeps_local_content_and_returns_server_config() -> None:
    msgs = _mixed()
    out = microcompact(
        msgs, now=1_100.0, last_assistant_time=1_000.0, keep_recent=3, server_trigger_tokens=150_000
    )
    assert out.messages == msgs and out.cleared_tool_use_ids == ()
    assert out.context_management == {
        "edits": [
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 150_000},
                "keep": {"type": "tool_uses", "value": 3},
                "clear_at_least": {"type": "input_tokens", "value": 20_000},
                "exclude_tools": ["Edit"],
            }
        ]
    }
    assert CONTEXT_MANAGEMENT_BETA == "context-management-2025-06-27"


def test_earlier_clears_are_sticky_while_warm() -> None:
    msgs = _mixed()
    cold = microcompact(msgs, now=10_000.0, last_assistant_time=1_000.0, keep_recent=2)
    warm = microcompact(
        msgs,
        now=10_010.0,
        last_assistant_time=10_000.0,
        keep_recent=2,
        already_cleared=cold.cleared_tool_use_ids,
    )
    assert _results(warm.messages) == _results(cold.messages)
    assert warm.cleared_tool_use_ids == ()


def test_server_config_matches_the_sdk_param_shape() -> None:
    # Keys of anthropic's BetaClearToolUses20250919EditParam (SDK 2.14).
    out = microcompact(history(2), now=1.0, last_assistant_time=0.5)
    edit = out.context_management["edits"][0] if out.context_management else {}
    allowed = {"type", "trigger", "keep", "clear_at_least", "exclude_tools", "clear_tool_inputs"}
    assert set(edit) <= allowed and edit["type"] == "clear_tool_uses_20250919"
