"""Normalization never loses a tool call that has a result, and never sends a message twice.

Reproductions from issue 12: with extended thinking on, a tool loop whose first assistant
message lost its thinking block (an interrupted stream leaves it unsigned) used to be
rewritten as plain text, and a message present twice in the internal array (same uuid)
reached the API twice.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from msg_strategies import TOOLS
from session_strategies import (
    answered_calls,
    edge_turns,
    examples,
    from_last_boundary,
    last_turns,
    sessions,
)

from queryloop.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ThinkingType,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    normalize_messages_for_api,
    validate_api_request,
)
from queryloop.messages import normalize as n
from queryloop.messages.api_types import ApiMessage
from queryloop.messages.incremental import IncrementalNormalizer
from queryloop.messages.validate import results_led_loop_first_assistant

ENABLED = {"type": "enabled", "budget_tokens": 1024}
ADAPTIVE = {"type": "adaptive"}


def _body(messages: list[ApiMessage], thinking: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "claude-opus-4-5",
        "max_tokens": 2048,
        "messages": messages,
        "tools": TOOLS,
        "thinking": thinking,
    }


def _errors(body: dict[str, Any]) -> list[str]:
    return [v.rule for v in validate_api_request(body) if v.severity == "error"]


def _blocks(messages: list[ApiMessage], kind: str) -> list[dict[str, Any]]:
    return [b for m in messages for b in m["content"] if b["type"] == kind]


def _interrupted_loop(final_prompt: bool) -> list[Message]:
    """A tool call whose stream was cut after the call (its thinking never got a signature),
    its real result, and (optionally) the user's next prompt."""
    history: list[Message] = [
        UserMessage(content="list the files", uuid="u1"),
        AssistantMessage(
            content=(
                ThinkingBlock(thinking="let me look", signature=""),
                ToolUseBlock(id="toolu_1", name="Bash", input={"command": "ls"}),
            ),
            message_id="msg_1",
            uuid="a1",
        ),
        UserMessage(
            content=(ToolResultBlock(tool_use_id="toolu_1", content="a.py\nb.py"),), uuid="r1"
        ),
    ]
    if final_prompt:
        history.append(UserMessage(content="now count them", uuid="u2"))
    return history


def test_enabled_thinking_keeps_a_tool_call_whose_thinking_was_lost() -> None:
    for final_prompt in (True, False):
        out = normalize_messages_for_api(_interrupted_loop(final_prompt), TOOLS, thinking=ENABLED)
        assert _errors(_body(out, ENABLED)) == []
        (use,) = _blocks(out, "tool_use")
        assert use["id"] == "toolu_1" and use["input"] == {"command": "ls"}
        (result,) = _blocks(out, "tool_result")
        assert result["tool_use_id"] == "toolu_1" and result["content"] == "a.py\nb.py"
        texts = [b["text"] for b in _blocks(out, "text")]
        assert not any("Called tool" in t for t in texts)
        if final_prompt:
            assert out[-1]["content"] == [{"type": "text", "text": "now count them"}]


def test_adaptive_thinking_needs_no_repair_at_all() -> None:
    """Adaptive mode does not require the final assistant turn to start with thinking."""
    history = _interrupted_loop(final_prompt=False)
    out = normalize_messages_for_api(history, TOOLS, thinking=ADAPTIVE)
    assert _errors(_body(out, ADAPTIVE)) == []
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert out[1]["content"][0]["type"] == "tool_use"


def test_a_message_present_twice_reaches_the_api_once() -> None:
    prompt = UserMessage(content="hello", uuid="u1")
    answer = AssistantMessage(content=(TextBlock(text="hi there"),), message_id="m1", uuid="a1")
    history: list[Message] = [prompt, answer, prompt, answer, UserMessage(content="bye", uuid="u2")]
    expected = [
        {"role": "user", "content": [{"type": "text", "text": "hello"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hi there"}]},
        {"role": "user", "content": [{"type": "text", "text": "bye"}]},
    ]
    assert normalize_messages_for_api(history, TOOLS, thinking_enabled=False) == expected
    normalizer = IncrementalNormalizer()
    assert normalizer.normalize(history[:2], TOOLS, thinking_enabled=False)
    assert normalizer.normalize(history, TOOLS, thinking_enabled=False) == expected


# -- properties over messy sessions -------------------------------------------------------

SYNTHETIC_TEXTS = {
    n.CONTINUE_TEXT,
    n.TOOL_LOOP_CLOSED_TEXT,
    n.LEADING_PLACEHOLDER_TEXT,
}
CONFIGS: dict[ThinkingType, dict[str, Any] | None] = {
    ThinkingType.DISABLED: None,
    ThinkingType.ENABLED: ENABLED,
    ThinkingType.ADAPTIVE: ADAPTIVE,
}


def _request(messages: list[ApiMessage], mode: ThinkingType) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m", "max_tokens": 2048, "messages": messages, "tools": TOOLS}
    if CONFIGS[mode] is not None:
        body["thinking"] = CONFIGS[mode]
    return body


def _check_nothing_lost(sent: list[Message], mode: ThinkingType) -> list[ApiMessage]:
    out = normalize_messages_for_api(sent, TOOLS, thinking=CONFIGS[mode])
    errors = [v for v in validate_api_request(_request(out, mode)) if v.is_error]
    assert errors == ([] if out else errors), (mode, errors, out)
    if not out:
        assert [v.rule for v in errors] == ["messages.empty"]
    uses = {b["id"]: b for b in _blocks(out, "tool_use")}
    results = {b["tool_use_id"]: b for b in _blocks(out, "tool_result")}
    for tid, (tool_input, content) in answered_calls(sent).items():
        assert tid in uses, (mode, tid, out)
        assert uses[tid]["input"] == tool_input
        assert results[tid]["content"] == content
    texts = [b["text"] for b in _blocks(out, "text") if b["text"] not in SYNTHETIC_TEXTS]
    assert len(texts) == len(set(texts)), (mode, texts)
    thoughts = [b["thinking"] for b in _blocks(out, "thinking")]
    assert len(thoughts) == len(set(thoughts))
    return out


@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions())
def test_messy_sessions_lose_nothing_and_send_nothing_twice(
    case: tuple[ThinkingType, list[Message]],
) -> None:
    mode, history = case
    config = CONFIGS[mode]
    out = _check_nothing_lost(from_last_boundary(history), mode)
    # What came before the last compaction never reaches the API, whoever passes it.
    assert normalize_messages_for_api(history, TOOLS, thinking=config) == out
    # Growing the array a piece at a time gives the same bytes incrementally.
    normalizer = IncrementalNormalizer()
    for cut in sorted({len(history) // 3, 2 * len(history) // 3, len(history)}):
        got = normalizer.normalize(history[:cut], TOOLS, thinking=config)
        assert got == normalize_messages_for_api(history[:cut], TOOLS, thinking=config)
    assert got == out


THINKING_BLOCKS = ("thinking", "redacted_thinking")


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(last_turns())
def test_the_last_turn_of_a_messy_session_becomes_a_request_the_api_accepts(
    history: list[Message],
) -> None:
    """Issue 25.12: thinking signed, unsigned, cut short or missing in an unfinished tool
    loop, beside reminders, blank text, queued prompts and interrupted calls."""
    for mode in (ThinkingType.ENABLED, ThinkingType.ADAPTIVE):
        out = _check_nothing_lost(from_last_boundary(history), mode)
        if mode is ThinkingType.ENABLED:
            # The looser reading of the rule holds as well (see close_tool_turn_without_thinking).
            start = results_led_loop_first_assistant(out)
            assert start is None or out[start]["content"][0]["type"] in THINKING_BLOCKS, out
        _assert_thinking_sent_whole(history, out)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edge_turns())
def test_the_last_turn_at_its_edges_becomes_a_request_the_api_accepts(
    history: list[Message],
) -> None:
    """Issue 32.8: the edges of issue 25.12 combined in one last turn — unsigned, cut,
    dropped or missing thinking beside interrupted, orphaned or partly answered calls, a
    response split with an attachment, a progress message or an empty text block between
    its parts, results streamed between the parts."""
    sent = from_last_boundary(history)
    for mode in (ThinkingType.ENABLED, ThinkingType.ADAPTIVE):
        out = _check_nothing_lost(sent, mode)
        if mode is ThinkingType.ENABLED:
            start = results_led_loop_first_assistant(out)
            assert start is None or out[start]["content"][0]["type"] in THINKING_BLOCKS, out
        _assert_thinking_sent_whole(sent, out)


def _assert_thinking_sent_whole(history: list[Message], out: list[ApiMessage]) -> None:
    """A response's thinking reaches the API whole or not at all: "the sequence of
    consecutive thinking blocks must match what the model generated ... you can't
    rearrange, edit, or partially drop them" (Thinking, "Preserving thinking blocks")."""
    by_response: dict[str, list[ThinkingBlock]] = {}
    for message in history:
        if isinstance(message, AssistantMessage):
            thoughts = [b for b in message.content if isinstance(b, ThinkingBlock)]
            by_response.setdefault(message.message_id or message.uuid, []).extend(thoughts)
    sent = {b["thinking"] for b in _blocks(out, "thinking")}
    for thoughts in by_response.values():
        texts = {t.thinking for t in thoughts}
        if texts & sent:
            assert texts <= sent and all(t.signature for t in thoughts), (thoughts, out)
