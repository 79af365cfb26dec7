"""Scripted server-tool turns: a web search the server ran, and the answer that cites it.

    turn(*web_search("python 3.14 release", [hit("https://python.org/", "Python")]),
         cited_text("It came out in October.", hit("https://python.org/", "Python")))

The server renders them as the Messages API does (docs: "Web search tool", streaming): the
`server_tool_use` block with its input streamed as `input_json_delta`s, the
`web_search_tool_result` sent whole in its `content_block_start`, a cited text block's
`citations_delta`s before its text, and `usage.server_tool_use.web_search_requests` counting
the searches of the response.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

WEB_SEARCH = "web_search"


@dataclass(frozen=True, slots=True)
class ServerToolUsePart:
    """The model's call of a server tool (`server_tool_use`)."""

    name: str
    input: Mapping[str, Any]
    id: str


@dataclass(frozen=True, slots=True)
class WebSearchResultPart:
    """The server's answer to a web search: hits (`web_search_result` objects) or an error."""

    tool_use_id: str
    results: tuple[Mapping[str, Any], ...] = ()
    error_code: str | None = None


@dataclass(frozen=True, slots=True)
class CitedTextPart:
    """Text with the citations (`web_search_result_location`) it rests on."""

    text: str
    citations: tuple[Mapping[str, Any], ...]


ServerPart = ServerToolUsePart | WebSearchResultPart | CitedTextPart


def hit(url: str, title: str, *, page_age: str | None = None) -> dict[str, Any]:
    """One search hit as the API sends it (its `encrypted_content` made up from the url)."""
    found: dict[str, Any] = {
        "type": "web_search_result",
        "url": url,
        "title": title,
        "encrypted_content": _opaque("content", url),
    }
    if page_age is not None:
        found["page_age"] = page_age
    return found


def web_search(
    query: str,
    hits: Sequence[Mapping[str, Any]] = (),
    *,
    error_code: str | None = None,
    id: str | None = None,
) -> tuple[ServerToolUsePart, WebSearchResultPart]:
    """A search the server ran: the call and its result (the hits, or `error_code`)."""
    call_id = id or f"srvtoolu_01QLTEST{uuid.uuid4().hex[:16]}"
    call = ServerToolUsePart(WEB_SEARCH, {"query": query}, call_id)
    return call, WebSearchResultPart(call_id, tuple(dict(h) for h in hits), error_code)


def cited_text(value: str, *sources: Mapping[str, Any]) -> CitedTextPart:
    """Text citing search hits (made by `hit`): one citation per source."""
    citations = tuple(
        {
            "type": "web_search_result_location",
            "url": source["url"],
            "title": source.get("title"),
            "encrypted_index": _opaque("index", str(source["url"])),
            "cited_text": value[:150],
        }
        for source in sources
    )
    return CitedTextPart(value, citations)


def server_block_json(part: ServerPart) -> dict[str, Any]:
    """The wire block of a server part."""
    if isinstance(part, ServerToolUsePart):
        return {
            "type": "server_tool_use",
            "id": part.id,
            "name": part.name,
            "input": dict(part.input),
        }
    if isinstance(part, WebSearchResultPart):
        content: Any = (
            {"type": "web_search_tool_result_error", "error_code": part.error_code}
            if part.error_code is not None
            else [dict(h) for h in part.results]
        )
        return {
            "type": "web_search_tool_result",
            "tool_use_id": part.tool_use_id,
            "content": content,
        }
    return {"type": "text", "text": part.text, "citations": [dict(c) for c in part.citations]}


def server_tool_usage(blocks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The usage field of a response whose blocks ran web searches (empty when none ran)."""
    searches = sum(
        1 for b in blocks if b.get("type") == "server_tool_use" and b.get("name") == WEB_SEARCH
    )
    if not searches:
        return {}
    return {"server_tool_use": {"web_search_requests": searches, "web_fetch_requests": 0}}


def _opaque(kind: str, url: str) -> str:
    return f"Eq{kind}" + hashlib.sha256(f"{kind}:{url}".encode()).hexdigest()[:32]
