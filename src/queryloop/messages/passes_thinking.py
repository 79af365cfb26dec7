"""Normalization passes about thinking blocks (see normalize.PASSES for the order)."""

from __future__ import annotations

from collections.abc import Sequence

from .api_types import ApiContentBlock, ApiMessage
from .normalize_context import (
    CONTINUE_TEXT,
    THINKING_TYPES,
    TOOL_LOOP_CLOSED_TEXT,
    NormalizeContext,
)
from .passes_api import merge_same_roles
from .thinking_mode import ThinkingType
from .types import AssistantMessage, Message
from .validate import final_turn_first_assistant, results_led_loop_first_assistant


def strip_thinking(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """Remove thinking blocks the request cannot carry.

    Needs: ApiMessages. With thinking off every thinking and redacted_thinking block goes
    (the API rejects them in a final assistant message, and earlier ones would only be
    dropped by it). With thinking on, a response's thinking is sent whole or not at all:
    the API verifies signatures (an interrupted stream leaves a block unsigned), rejects a
    thinking block that ends a message, and "the sequence of consecutive thinking blocks
    must match what the model generated ... you can't rearrange, edit, or partially drop
    them" — so a message with an unsigned thinking block, or one that would end with
    thinking, loses all of its thinking blocks.
    Guarantees: no message is left empty; roles may repeat where one vanished.
    """
    out: list[ApiMessage] = []
    for message in messages:
        content = message["content"]
        if message["role"] == "assistant" and any(b.get("type") in THINKING_TYPES for b in content):
            if not ctx.thinking_enabled or not _carryable(content):
                content = _without_thinking(content)
            if not content:
                continue
            message = {"role": "assistant", "content": content}
        out.append(message)
    return out


def _carryable(content: list[ApiContentBlock]) -> bool:
    """Whether the message's thinking can be sent as it is (all signed, none last)."""
    if content[-1].get("type") in THINKING_TYPES:
        return False
    return all(b.get("type") != "thinking" or b.get("signature") for b in content)


def _without_thinking(content: list[ApiContentBlock]) -> list[ApiContentBlock]:
    return [b for b in content if b.get("type") not in THINKING_TYPES]


def drop_trailing_thinking(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """Drop the thinking of an assistant message that ends with thinking, and messages left
    empty.

    Needs: paired messages. Pairing may remove a duplicate tool_use and leave a thinking
    block last, which the API rejects; the message's other thinking blocks go with it (a
    response's thinking is sent whole or not at all, see `strip_thinking`). A message
    emptied here held no tool_use, so pairing still holds. Guarantees: no assistant
    message ends with thinking; consecutive same roles merged again.
    """
    out: list[ApiMessage] = []
    for message in messages:
        content = message["content"]
        if message["role"] == "assistant" and content[-1].get("type") in THINKING_TYPES:
            content = _without_thinking(content)
            if not content:
                continue
            message = {"role": "assistant", "content": content}
        out.append(message)
    return merge_same_roles(out)


def close_tool_turn_without_thinking(
    messages: list[ApiMessage], ctx: NormalizeContext
) -> list[ApiMessage]:
    """With extended thinking, end an unfinished tool loop that lacks its thinking block.

    Needs: paired messages. In extended (manual, `enabled`) mode the API requires the final
    assistant turn of a request to start with a thinking block: when the array ends inside
    a tool loop, the loop's first assistant message must start with one. The loop starts
    after the last user message with anything but tool_results ("a non-tool-result user
    block ... designates a new assistant loop"); the looser reading, where a message that
    merely starts with tool_results continues the loop, is satisfied too, so the request
    is valid under either. When a loop start has no thinking block (it was unsigned,
    interrupted, or thinking was switched on mid-turn), the loop is closed instead of
    rewritten: the last user message's tool_results stay a user message of their own, a
    short assistant message (`TOOL_LOOP_CLOSED_TEXT`) follows, and the rest of that user
    message (or `CONTINUE_TEXT` when there is none) comes after it. Every tool_use and
    tool_result is kept as it was. Adaptive mode has no such requirement; nothing changes
    there. Guarantees: the thinking requirement for the final turn holds under both
    readings; pairing still holds.
    """
    if ctx.thinking is not ThinkingType.ENABLED:
        return messages
    starts = (final_turn_first_assistant(messages), results_led_loop_first_assistant(messages))
    if all(start is None or _starts_with_thinking(messages[start]) for start in starts):
        return messages
    content = messages[-1]["content"]
    results = [b for b in content if b.get("type") == "tool_result"]
    rest = [b for b in content if b.get("type") != "tool_result"]
    return [
        *messages[:-1],
        {"role": "user", "content": results},
        {"role": "assistant", "content": [{"type": "text", "text": TOOL_LOOP_CLOSED_TEXT}]},
        {"role": "user", "content": rest or [{"type": "text", "text": CONTINUE_TEXT}]},
    ]


def _starts_with_thinking(message: ApiMessage) -> bool:
    content = message["content"]
    return bool(content) and content[0].get("type") in THINKING_TYPES


def thinking_holds(history: Sequence[Message], api: Sequence[ApiMessage]) -> bool:
    """Whether `api`, normalized from `history` with extended thinking, can be sent with it.

    False when no valid thinking can open the unfinished tool loop at the end: normalization
    had to close the loop (`close_tool_turn_without_thinking`), or an assistant message of
    the loop lost the thinking its response carried (unsigned after an interrupted stream,
    a thinking block left last by a split or a dropped duplicate). The API's error names
    the final assistant message ("a final `assistant` message must start with a thinking
    block (preceeding the lastmost set of `tool_use` and `tool_result` blocks)"), so such a
    request is sent with thinking off instead, as that error advises ("To avoid this
    requirement, disable `thinking`"). The loop is read the loosest way (a user message that
    starts with tool_results continues it), so the whole loop keeps one thinking mode from
    request to request, as the API asks ("a tool-use loop is one assistant turn").
    """
    if _closed(api):
        return False
    start = results_led_loop_first_assistant(api)
    if start is None:
        return True
    if not _starts_with_thinking(api[start]):
        return False
    lost = _tool_ids_of_thinking_responses(history)
    return all(
        _starts_with_thinking(api[i]) or not (_tool_use_ids(api[i]) & lost)
        for i in range(start + 2, len(api), 2)
    )


def _closed(api: Sequence[ApiMessage]) -> bool:
    """Whether the array ends with the loop closure `close_tool_turn_without_thinking` adds."""
    if len(api) < 2 or api[-2]["role"] != "assistant":
        return False
    content = api[-2]["content"]
    return len(content) == 1 and content[0].get("text") == TOOL_LOOP_CLOSED_TEXT


def _tool_ids_of_thinking_responses(history: Sequence[Message]) -> set[str]:
    """The tool_use ids of every response that carried thinking (a response may be split
    over several messages sharing `message_id`)."""
    thinking: set[str] = set()
    ids: dict[str, set[str]] = {}
    for message in history:
        if not isinstance(message, AssistantMessage):
            continue
        key = message.message_id or message.uuid
        ids.setdefault(key, set()).update(b.id for b in message.content if b.type == "tool_use")
        if any(b.type in THINKING_TYPES for b in message.content):
            thinking.add(key)
    return {tool_id for key in thinking for tool_id in ids[key]}


def _tool_use_ids(message: ApiMessage) -> set[str]:
    return {str(b.get("id")) for b in message["content"] if b.get("type") == "tool_use"}
