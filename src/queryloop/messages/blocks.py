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
    """Plain text from the user or the model. `citations`: the API's citation objects of a
    cited answer (`web_search_result_location`, …), kept as sent so the text can be sent back
    unchanged."""

    text: str
    type: Literal["text"] = "text"
    citations: tuple[Mapping[str, Any], ...] = ()


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


@dataclass(frozen=True, slots=True)
class ServerToolUseBlock:
    """A call of a tool the API runs itself (`web_search`): the model made it and the server
    answered it within the same response, so it never gets a tool_result from us."""

    id: str
    name: str
    input: Mapping[str, Any] = field(default_factory=dict)
    type: Literal["server_tool_use"] = "server_tool_use"


@dataclass(frozen=True, slots=True)
class WebSearchResult:
    """One hit of a server-side web search (`web_search_result`). `encrypted_content` is
    opaque: it must go back unchanged for citations to work."""

    url: str
    title: str
    encrypted_content: str = ""
    page_age: str | None = None


@dataclass(frozen=True, slots=True)
class WebSearchToolResultBlock:
    """What the server's web search answered a `server_tool_use`: the hits, or an error code
    (`max_uses_exceeded`, `too_many_requests`, `query_too_long`, `invalid_tool_input`,
    `unavailable`, `request_too_large`)."""

    tool_use_id: str
    results: tuple[WebSearchResult, ...] = ()
    error_code: str | None = None
    type: Literal["web_search_tool_result"] = "web_search_tool_result"


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
    | ServerToolUseBlock
    | WebSearchToolResultBlock
)
UserContentBlock: TypeAlias = TextBlock | ImageBlock | DocumentBlock | ToolResultBlock
AssistantContentBlock: TypeAlias = (
    TextBlock
    | ToolUseBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ServerToolUseBlock
    | WebSearchToolResultBlock
)
SERVER_BLOCK_TYPES = frozenset({"server_tool_use", "web_search_tool_result"})
"""Blocks of a server tool's call and result: both in the assistant's message, never paired
with a tool_result of ours."""

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})


def block_to_api(block: ContentBlock) -> JSONObject:
    """The wire (JSON) form of a block, exactly as the Messages API expects it."""
    match block:
        case TextBlock(text=text, citations=citations):
            wire_text: JSONObject = {"type": "text", "text": text}
            if citations:
                wire_text["citations"] = [dict(c) for c in citations]
            return wire_text
        case ServerToolUseBlock(id=id_, name=name, input=input_):
            return {"type": "server_tool_use", "id": id_, "name": name, "input": dict(input_)}
        case WebSearchToolResultBlock():
            return _web_search_result_to_api(block)
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
        cited = data.get("citations")
        citations = tuple(dict(c) for c in cited if isinstance(c, Mapping)) if cited else ()
        return TextBlock(text=str(data.get("text", "")), citations=citations)
    if kind == "server_tool_use":
        return ServerToolUseBlock(
            id=str(data["id"]), name=str(data["name"]), input=dict(data.get("input") or {})
        )
    if kind == "web_search_tool_result":
        return web_search_result_from_api(data)
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


def _web_search_result_to_api(block: WebSearchToolResultBlock) -> JSONObject:
    content: Any
    if block.error_code is not None:
        content = {"type": "web_search_tool_result_error", "error_code": block.error_code}
    else:
        content = [_hit_to_api(hit) for hit in block.results]
    return {"type": "web_search_tool_result", "tool_use_id": block.tool_use_id, "content": content}


def _hit_to_api(hit: WebSearchResult) -> JSONObject:
    wire: JSONObject = {
        "type": "web_search_result",
        "url": hit.url,
        "title": hit.title,
        "encrypted_content": hit.encrypted_content,
    }
    if hit.page_age is not None:
        wire["page_age"] = hit.page_age
    return wire


def web_search_result_from_api(data: Mapping[str, Any]) -> WebSearchToolResultBlock:
    """Parse a wire `web_search_tool_result` (its content: a list of hits or an error)."""
    content = data.get("content")
    tool_use_id = str(data["tool_use_id"])
    if isinstance(content, Mapping):
        code = str(content.get("error_code") or "unavailable")
        return WebSearchToolResultBlock(tool_use_id=tool_use_id, error_code=code)
    hits = tuple(
        WebSearchResult(
            url=str(hit.get("url", "")),
            title=str(hit.get("title") or ""),
            encrypted_content=str(hit.get("encrypted_content") or ""),
            page_age=hit.get("page_age"),
        )
        for hit in content or ()
        if isinstance(hit, Mapping)
    )
    return WebSearchToolResultBlock(tool_use_id=tool_use_id, results=hits)
