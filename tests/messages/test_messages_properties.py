"""Property tests: for ANY internal array the normalized request obeys the API's rules."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msg_strategies import TOOL_IDS, TOOLS, internal_arrays, valid_arrays
from session_strategies import examples

from queryloop.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingType,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    ensure_tool_result_pairing,
    normalize_messages_for_api,
    validate_api_request,
)
from queryloop.messages.api_types import ApiMessage

PAIRING_RULES = ("tool_use.", "tool_result.", "messages.content_empty")


def request(messages: list[ApiMessage], thinking: bool | ThinkingType) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "m", "max_tokens": 2048, "messages": messages, "tools": TOOLS}
    mode = ThinkingType.of(thinking)
    if mode is ThinkingType.ENABLED:
        body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    elif mode is ThinkingType.ADAPTIVE:
        body["thinking"] = {"type": "adaptive"}
    return body


def errors(body: dict[str, Any]) -> list[Any]:
    return [v for v in validate_api_request(body) if v.is_error]


@settings(max_examples=examples(1300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(internal_arrays())
def test_any_internal_array_normalizes_to_a_valid_request(messages: list[Message]) -> None:
    for thinking in (ThinkingType.ENABLED, ThinkingType.ADAPTIVE, ThinkingType.DISABLED):
        out = normalize_messages_for_api(messages, TOOLS, thinking=thinking)
        violations = validate_api_request(request(out, thinking))
        if not out:
            assert [v.rule for v in violations] == ["messages.empty"]
        else:
            assert violations == [], (thinking, violations, out)
    # Deterministic: the same history gives the same request, byte for byte.
    assert normalize_messages_for_api(messages, TOOLS, thinking_enabled=False) == out


def _content(messages: list[Message]) -> tuple[set[str], set[str], set[str]]:
    texts: set[str] = set()
    uses: set[str] = set()
    results: set[str] = set()
    for message in messages:
        if not isinstance(message, UserMessage | AssistantMessage):
            continue
        content = message.content
        if isinstance(content, str):
            texts.add(content)
            continue
        for block in content:
            if isinstance(block, TextBlock):
                texts.add(block.text)
            elif isinstance(block, ToolUseBlock):
                uses.add(block.id)
            elif isinstance(block, ToolResultBlock):
                results.add(block.tool_use_id)
    return texts, uses, results


def _api_content(messages: list[ApiMessage]) -> tuple[set[str], set[str], set[str]]:
    blocks = [b for m in messages for b in m["content"]]
    return (
        {b["text"] for b in blocks if b["type"] == "text"},
        {b["id"] for b in blocks if b["type"] == "tool_use"},
        {b["tool_use_id"] for b in blocks if b["type"] == "tool_result" and not b.get("is_error")},
    )


@settings(max_examples=examples(300), deadline=None)
@given(st.booleans().flatmap(lambda t: st.tuples(st.just(t), valid_arrays(t))))
def test_valid_input_keeps_all_of_its_content(case: tuple[bool, list[Message]]) -> None:
    thinking, messages = case
    out = normalize_messages_for_api(messages, TOOLS, thinking_enabled=thinking)
    assert validate_api_request(request(out, thinking)) == []
    texts, uses, results = _content(messages)
    out_texts, out_uses, out_results = _api_content(out)
    assert texts <= out_texts
    assert uses == out_uses
    assert results == out_results
    thinking_in = sum(
        1
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if b.type == "thinking"
    )
    thinking_out = sum(1 for m in out for b in m["content"] if b["type"] == "thinking")
    assert thinking_out == (thinking_in if thinking else 0)


api_blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["a", "b"])),
    st.builds(
        lambda i: {"type": "tool_use", "id": i, "name": "Bash", "input": {}},
        st.sampled_from(TOOL_IDS),
    ),
    st.builds(
        lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"},
        st.sampled_from(TOOL_IDS),
    ),
)
api_arrays = st.lists(
    st.builds(
        lambda role, content: {"role": role, "content": content},
        st.sampled_from(["user", "assistant"]),
        st.lists(api_blocks, min_size=1, max_size=4),
    ),
    max_size=10,
)


def _fix_roles(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tool blocks in the wrong role's message are not pairing's business; drop them."""
    fixed = []
    for m in messages:
        wrong = "tool_result" if m["role"] == "assistant" else "tool_use"
        content = [b for b in m["content"] if b["type"] != wrong]
        if content:
            fixed.append({"role": m["role"], "content": content})
    return fixed


@settings(max_examples=examples(500), deadline=None)
@given(api_arrays)
def test_pairing_is_idempotent_pure_and_pairs_everything(raw: list[dict[str, Any]]) -> None:
    messages: list[ApiMessage] = _fix_roles(raw)  # type: ignore[assignment]
    snapshot = repr(messages)
    once = ensure_tool_result_pairing(messages)
    assert repr(messages) == snapshot
    assert ensure_tool_result_pairing(once) == once
    body = {"model": "m", "max_tokens": 10, "messages": once, "tools": TOOLS}
    rules = [v.rule for v in errors(body) if v.rule.startswith(PAIRING_RULES)]
    assert rules == []


@settings(max_examples=examples(200), deadline=None)
@given(st.booleans().flatmap(lambda t: st.tuples(st.just(t), valid_arrays(t), st.integers(0, 10))))
def test_earlier_turns_normalize_to_the_same_bytes_later(
    case: tuple[bool, list[Message], int],
) -> None:
    """The prompt cache needs every earlier message byte-identical from one request to the next."""
    thinking, messages, pick = case
    starts = [
        i
        for i, m in enumerate(messages)
        if isinstance(m, UserMessage) and str(m.content).startswith("prompt")
    ]
    cut = starts[pick % len(starts)]
    if cut == 0:
        return
    earlier = normalize_messages_for_api(messages[:cut], TOOLS, thinking_enabled=thinking)
    later = normalize_messages_for_api(messages, TOOLS, thinking_enabled=thinking)
    # The earlier request ended with the assistant; with thinking on a "Continue." followed.
    stable = earlier[:-1] if thinking else earlier
    assert later[: len(stable)] == stable
