"""Message content in the conventions' JSON shapes, for the opt-in content attributes.

Only used when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` asks for it
(docs/telemetry.md). The shapes are the
conventions' input/output message schemas (gen-ai-input-messages.json,
gen-ai-output-messages.json, v1.41.0): a message is `{"role", "parts": [...]}`, a part is
`text`, `tool_call` (id, name, arguments), `tool_call_response` (id, response) or
`reasoning`. Recorded on spans as a JSON string, as the conventions allow where structured
attributes are not supported (Python's SDK takes only primitives and their lists).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..messages.blocks import (
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from ..messages.types import AssistantMessage, Message, UserMessage

MAX_TEXT_CHARS = 16_000
"""One text part is cut beyond this (backends limit attribute sizes; the conventions allow
truncation that keeps the JSON structure)."""


def to_json(value: Any) -> str:
    """A compact JSON string (what a content attribute holds)."""
    return json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))


def messages_json(messages: Iterable[Message]) -> str:
    """User and assistant messages as the conventions' message list, JSON-encoded."""
    return to_json([m for m in map(message_parts, messages) if m is not None])


def output_json(messages: Iterable[AssistantMessage], finish_reason: str | None) -> str:
    """One response (its assistant messages merged) as the conventions' output list."""
    parts = [p for m in messages for p in _assistant_parts(m)]
    return to_json([{"role": "assistant", "parts": parts, "finish_reason": finish_reason or ""}])


def message_parts(message: Message) -> dict[str, Any] | None:
    """One message in the conventions' shape (None for messages the model never sees)."""
    if isinstance(message, AssistantMessage):
        return {"role": "assistant", "parts": _assistant_parts(message)}
    if isinstance(message, UserMessage):
        if isinstance(message.content, str):
            return {"role": "user", "parts": [_text(message.content)]}
        parts = [p for p in map(_user_part, message.content) if p is not None]
        return {"role": "user", "parts": parts}
    return None


def _assistant_parts(message: AssistantMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(_text(block.text))
        elif isinstance(block, ThinkingBlock):
            parts.append({"type": "reasoning", "content": _cut(block.thinking)})
        elif isinstance(block, ToolUseBlock):
            parts.append(
                {"type": "tool_call", "id": block.id, "name": block.name, "arguments": block.input}
            )
    return parts


def _user_part(block: object) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return _text(block.text)
    if isinstance(block, ToolResultBlock):
        return {
            "type": "tool_call_response",
            "id": block.tool_use_id,
            "response": result_text(block),
        }
    return None


def result_text(block: ToolResultBlock) -> str:
    """A tool result's text (images and documents are named, not embedded)."""
    if isinstance(block.content, str):
        return _cut(block.content)
    pieces = [b.text if isinstance(b, TextBlock) else f"[{b.type}]" for b in block.content]
    return _cut("\n".join(pieces))


def arguments_json(arguments: Mapping[str, Any]) -> str:
    """A tool call's arguments, JSON-encoded."""
    return to_json(dict(arguments))


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "content": _cut(text)}


def _cut(text: str) -> str:
    if len(text) <= MAX_TEXT_CHARS:
        return text
    return f"{text[:MAX_TEXT_CHARS]}... [{len(text) - MAX_TEXT_CHARS} more characters]"
