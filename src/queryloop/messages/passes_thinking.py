"""Normalization passes about thinking blocks (see normalize.PASSES for the order)."""

from __future__ import annotations

from .api_types import ApiContentBlock, ApiMessage
from .normalize_context import (
    CONTINUE_TEXT,
    THINKING_TYPES,
    TOOL_LOOP_CLOSED_TEXT,
    NormalizeContext,
)
from .passes_api import merge_same_roles
from .thinking_mode import ThinkingType
from .validate import final_turn_first_assistant


def strip_thinking(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """Remove thinking blocks the request cannot carry.

    Needs: ApiMessages. With thinking off every thinking and redacted_thinking block goes
    (the API rejects them in a final assistant message, and earlier ones would only be
    dropped by it). With thinking on, unsigned thinking blocks go (the API verifies
    signatures; an interrupted stream leaves none), and so do thinking blocks that would
    end an assistant message (the API rejects a final thinking block).
    Guarantees: no message is left empty; roles may repeat where one vanished.
    """
    out: list[ApiMessage] = []
    for message in messages:
        content = message["content"]
        if message["role"] == "assistant" and any(b.get("type") in THINKING_TYPES for b in content):
            content = _carryable(content, ctx.thinking_enabled)
            if not content:
                continue
            message = {"role": "assistant", "content": content}
        out.append(message)
    return out


def _carryable(content: list[ApiContentBlock], thinking_enabled: bool) -> list[ApiContentBlock]:
    if not thinking_enabled:
        return [b for b in content if b.get("type") not in THINKING_TYPES]
    kept = [b for b in content if b.get("type") != "thinking" or b.get("signature")]
    return _without_trailing_thinking(kept)


def _without_trailing_thinking(content: list[ApiContentBlock]) -> list[ApiContentBlock]:
    end = len(content)
    while end and content[end - 1].get("type") in THINKING_TYPES:
        end -= 1
    return content[:end]


def drop_trailing_thinking(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """Drop thinking blocks that end an assistant message, and messages left empty.

    Needs: paired messages. Pairing may remove a duplicate tool_use and leave a thinking
    block last, which the API rejects. A message emptied here held no tool_use, so
    pairing still holds. Guarantees: no assistant message ends with thinking; consecutive
    same roles merged again.
    """
    out: list[ApiMessage] = []
    for message in messages:
        content = message["content"]
        if message["role"] == "assistant" and content[-1].get("type") in THINKING_TYPES:
            content = _without_trailing_thinking(content)
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
    a tool loop (its last message is a tool_result-led user message), the loop's first
    assistant message must start with one. When it does not (the thinking was unsigned,
    or thinking was switched on mid-turn), the loop is closed instead of rewritten: the
    last user message's tool_results stay a user message of their own, a short assistant
    message (`TOOL_LOOP_CLOSED_TEXT`) follows, and the rest of that user message (or
    `CONTINUE_TEXT` when there is none) comes after it. Every tool_use and tool_result is
    kept as it was. Adaptive mode has no such requirement; nothing changes there.
    Guarantees: the thinking requirement for the final turn holds; pairing still holds.
    """
    if ctx.thinking is not ThinkingType.ENABLED:
        return messages
    start = final_turn_first_assistant(messages)
    if start is None:
        return messages
    first = messages[start]["content"]
    if first and first[0].get("type") in THINKING_TYPES:
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
