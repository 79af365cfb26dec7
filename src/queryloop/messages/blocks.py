"""Content blocks: the Anthropic Messages API block shapes, as frozen dataclasses.

These are the canonical content of every message in queryloop, whatever the provider.
`cache_control` is deliberately absent: it is a property of one request, added by the
request builder, never stored in history.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from .interruption import Interruption

JSONObject: TypeAlias = dict[str, Any]


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Plain text from the user or the model."""

    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image; `source` is the API's source object (base64 or url)."""

    source: Mapping[str, Any]
    type: Literal["image"] = "image"


@dataclass(frozen=True, slots=True)
class DocumentBlock:
    """A document (PDF or text source) with an optional title and context."""

    source: Mapping[str, Any]
    title: str | None = None
    context: str | None = None
    type: Literal["document"] = "document"


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    """A tool call requested by the model."""

    id: str
    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    type: Literal["tool_use"] = "tool_use"


ToolResultContent: TypeAlias = "str | tuple[TextBlock | ImageBlock | DocumentBlock, ...]"


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """The result of one tool call; must follow its tool_use in the next user message."""

    tool_use_id: str
    content: str | tuple[TextBlock | ImageBlock | DocumentBlock, ...] = ""
    is_error: bool = False
    interrupted: Interruption | None = None
    """Set when queryloop answered the call because it was interrupted (a stand-in, see
    `messages.interruption`). Internal: persisted in transcripts, never sent to the API."""
    type: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """Extended thinking; `signature` must be sent back unchanged."""

    thinking: str
    signature: str = ""
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class RedactedThinkingBlock:
    """Encrypted thinking the API returns when thinking was flagged."""

    data: str
    type: Literal["redacted_thinking"] = "redacted_thinking"


ContentBlock: TypeAlias = (
    TextBlock
    | ImageBlock
    | DocumentBlock
    | ToolUseBlock
    | ToolResultBlock
    | ThinkingBlock
    | RedactedThinkingBlock
)
UserContentBlock: TypeAlias = TextBlock | ImageBlock | DocumentBlock | ToolResultBlock
AssistantContentBlock: TypeAlias = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})


def block_to_api(block: ContentBlock) -> JSONObject:
    """The wire (JSON) form of a block, exactly as the Messages API expects it."""
    match block:
        case TextBlock(text=text):
            return {"type": "text", "text": text}
        case ToolUseBlock(id=id_, name=name, input=input_):
            return {"type": "tool_use", "id": id_, "name": name, "input": dict(input_)}
        case ToolResultBlock(tool_use_id=tid, content=content, is_error=is_error):
            wire: JSONObject = {"type": "tool_result", "tool_use_id": tid}
            wire["content"] = (
                content if isinstance(content, str) else [block_to_api(b) for b in content]
            )
            if is_error:
                wire["is_error"] = True
            return wire
        case ThinkingBlock(thinking=thinking, signature=signature):
            return {"type": "thinking", "thinking": thinking, "signature": signature}
        case RedactedThinkingBlock(data=data):
            return {"type": "redacted_thinking", "data": data}
        case ImageBlock(source=source):
            return {"type": "image", "source": dict(source)}
        case DocumentBlock(source=source, title=title, context=context):
            doc: JSONObject = {"type": "document", "source": dict(source)}
            if title is not None:
                doc["title"] = title
            if context is not None:
                doc["context"] = context
            return doc
    raise TypeError(f"not a content block: {block!r}")


def block_from_api(data: Mapping[str, Any]) -> ContentBlock:
    """Parse a wire block. Unknown fields (citations, cache_control) are dropped."""
    kind = data.get("type")
    if kind == "text":
        return TextBlock(text=str(data.get("text", "")))
    if kind == "tool_use":
        return ToolUseBlock(id=data["id"], name=data["name"], input=dict(data.get("input") or {}))
    if kind == "tool_result":
        raw = data.get("content", "")
        content: str | tuple[TextBlock | ImageBlock | DocumentBlock, ...]
        if isinstance(raw, str):
            content = raw
        else:
            content = tuple(_result_part(b) for b in raw)
        return ToolResultBlock(
            tool_use_id=data["tool_use_id"], content=content, is_error=bool(data.get("is_error"))
        )
    if kind == "thinking":
        return ThinkingBlock(thinking=data.get("thinking", ""), signature=data.get("signature", ""))
    if kind == "redacted_thinking":
        return RedactedThinkingBlock(data=data["data"])
    if kind == "image":
        return ImageBlock(source=dict(data["source"]))
    if kind == "document":
        return DocumentBlock(
            source=dict(data["source"]), title=data.get("title"), context=data.get("context")
        )
    raise ValueError(f"unknown content block type {kind!r}")


def _result_part(data: Mapping[str, Any]) -> TextBlock | ImageBlock | DocumentBlock:
    block = block_from_api(data)
    if not isinstance(block, TextBlock | ImageBlock | DocumentBlock):
        raise ValueError(f"a tool_result may not contain a {block.type!r} block")
    return block
