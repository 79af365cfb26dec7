"""Token accounting: how big the next request will be.

The context size of the next request is the last API response's usage (prompt plus output,
which is exactly what the conversation occupied after that response) plus a cheap estimate
of every message appended since. Usage is the ground truth whenever it exists; the estimate
only covers the few messages the server has not counted yet, so its error stays small.

The estimate is deliberately simple and documented: ``ceil(characters / 4)`` over everything
that reaches the API — text (and its citations), tool_use and server_tool_use names and JSON
inputs, tool_result content, a web search result's whole JSON, thinking, redacted thinking,
attachment payloads — and a fixed `IMAGE_TOKENS` for each image or
document (their real cost depends on pixels or pages, which we do not decode).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..messages.blocks import (
    DocumentBlock,
    ImageBlock,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    WebSearchToolResultBlock,
    block_to_api,
)
from ..messages.types import (
    AssistantMessage,
    AttachmentMessage,
    Message,
    SystemMessage,
    SystemSubtype,
    UserMessage,
)

CHARS_PER_TOKEN = 4
"""The estimate's divisor: about four characters of English or code per token."""
IMAGE_TOKENS = 2_000
"""Fixed cost charged for an image or document block."""


def estimate_text_tokens(text: str) -> int:
    """``ceil(len(text) / 4)``: the documented rough estimate for a string."""
    return -(-len(text) // CHARS_PER_TOKEN)


def _json_chars(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return len(str(value))


def _block_chars(block: object) -> tuple[int, int]:
    """(characters, fixed tokens) of one content block."""
    match block:
        case TextBlock(text=text, citations=citations):
            return len(text) + (_json_chars(list(citations)) if citations else 0), 0
        case ThinkingBlock(thinking=thinking):
            return len(thinking), 0
        case RedactedThinkingBlock(data=data):
            return len(data), 0
        case ToolUseBlock(name=name, input=input_):
            return len(name) + _json_chars(dict(input_)), 0
        case ToolResultBlock(content=content):
            if isinstance(content, str):
                return len(content), 0
            chars = fixed = 0
            for part in content:
                c, f = _block_chars(part)
                chars, fixed = chars + c, fixed + f
            return chars, fixed
        case ServerToolUseBlock(name=name, input=input_):
            return len(name) + _json_chars(dict(input_)), 0
        case WebSearchToolResultBlock():
            # The hits' encrypted content is what the server bills as input: count all of it.
            return _json_chars(block_to_api(block)), 0
        case ImageBlock() | DocumentBlock():
            return 0, IMAGE_TOKENS
    return 0, 0


def estimate_message_tokens(message: Message) -> int:
    """The rough token cost of one internal message as it will reach the API (0 if it never
    does: progress, tombstones, tool-use summaries, non-API system messages)."""
    chars = fixed = 0
    if isinstance(message, UserMessage | AssistantMessage):
        if isinstance(message.content, str):
            chars = len(message.content)
        else:
            for block in message.content:
                c, f = _block_chars(block)
                chars, fixed = chars + c, fixed + f
    elif isinstance(message, AttachmentMessage):
        chars = _json_chars(dict(message.attachment.data)) + len(message.attachment.type)
    elif isinstance(message, SystemMessage) and message.subtype is SystemSubtype.LOCAL_COMMAND:
        chars = len(message.content)
    return -(-chars // CHARS_PER_TOKEN) + fixed


def estimate_tokens(messages: Sequence[Message]) -> int:
    """The rough token cost of `messages` (see the module docstring for the rule)."""
    return sum(estimate_message_tokens(m) for m in messages)


def _is_compact_boundary(message: Message) -> bool:
    return isinstance(message, SystemMessage) and message.subtype is SystemSubtype.COMPACT_BOUNDARY


def last_usage_index(messages: Sequence[Message]) -> int | None:
    """Index of the last assistant message carrying usage, scanning backwards and stopping at
    a compact boundary (usage from before a compaction describes a history that is gone)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if _is_compact_boundary(message):
            return None
        if isinstance(message, AssistantMessage) and message.usage is not None:
            if not message.is_api_error:
                return index
    return None


def token_count_with_estimation(messages: Sequence[Message]) -> int:
    """Tokens the next request will hold: the last response's `usage.context_tokens` plus an
    estimate of the messages after it. O(messages since that response): it scans backwards
    only as far as the last usage. Pure estimate only when no usage exists yet."""
    index = last_usage_index(messages)
    if index is None:
        return estimate_tokens(messages)
    anchor = messages[index]
    assert isinstance(anchor, AssistantMessage) and anchor.usage is not None
    total = anchor.usage.context_tokens
    for message in messages[index + 1 :]:
        # A streamed response may be split over messages sharing its id: usage counted them.
        if isinstance(message, AssistantMessage) and _same_response(message, anchor):
            continue
        total += estimate_message_tokens(message)
    return total


def _same_response(message: AssistantMessage, anchor: AssistantMessage) -> bool:
    return bool(anchor.message_id) and message.message_id == anchor.message_id


def usage_summary(usage: Mapping[str, int]) -> str:
    """A one-line human description of a usage mapping (for logs and describe())."""
    return ", ".join(f"{key}={value:,}" for key, value in usage.items())
