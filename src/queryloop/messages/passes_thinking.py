"""Normalization passes about thinking blocks (see normalize.PASSES for the order)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from .api_types import ApiContentBlock, ApiMessage
from .normalize_context import THINKING_TYPES, NormalizeContext
from .passes_api import merge_same_roles
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
    """With thinking on, make an unfinished tool loop that lacks its thinking block valid.

    Needs: paired messages. When the array ends inside a tool loop (its last message is a
    tool_result-led user message), the API requires the loop's first assistant message to
    start with a thinking block. If it does not (the thinking was unsigned, or thinking was
    switched on mid-turn) no valid request can keep those blocks as tool calls, so that
    turn's tool_use and tool_result blocks are rewritten as plain text.
    Guarantees: the thinking requirement for the final turn holds; pairing still holds.
    """
    if not ctx.thinking_enabled:
        return messages
    start = final_turn_first_assistant(messages)
    if start is None:
        return messages
    first = messages[start]["content"]
    if first and first[0].get("type") in THINKING_TYPES:
        return messages
    names = {
        b["id"]: b.get("name", "tool")
        for m in messages[start:]
        for b in m["content"]
        if b.get("type") == "tool_use"
    }
    tail: list[ApiMessage] = [
        {"role": m["role"], "content": [x for b in m["content"] for x in _as_text(b, names)]}
        for m in messages[start:]
    ]
    return messages[:start] + tail


def _as_text(block: ApiContentBlock, names: Mapping[str, str]) -> list[ApiContentBlock]:
    kind = block.get("type")
    if kind == "tool_use":
        args = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
        return [{"type": "text", "text": f"[Called tool {block.get('name')} with input {args}]"}]
    if kind != "tool_result":
        return [block]
    name = names.get(block.get("tool_use_id", ""), "tool")
    status = "error" if block.get("is_error") else "result"
    inner = block.get("content", "")
    parts = [{"type": "text", "text": inner}] if isinstance(inner, str) else list(inner)
    texts = [p for p in parts if p.get("type") == "text" and str(p.get("text", "")).strip()]
    media = [p for p in parts if p.get("type") != "text"]
    body = "\n".join(str(p["text"]) for p in texts) or "(no output)"
    return [{"type": "text", "text": f"[Tool {name} {status}]\n{body}"}, *media]
