"""WebSearch: search the web through the Messages API's server-side web search tool.

As Claude Code does it: the tool (a client tool named WebSearch, with Claude Code's input
fields) sends a side request on the session's model whose only tool is the server's
`web_search` (`WEB_SEARCH_TOOL_TYPE`), with the query in its user message, and returns the
result blocks as the WebSearch call's result: the text the model wrote and the links found.
The main request's tools and cached prefix never change (WebSearch is an ordinary tool in
it), and the server-tool blocks live only in the side conversation.

A response that stops with `pause_turn` (the server paused a long search turn) is sent back
as it came, normalized like any history (`messages.normalize_messages_for_api` keeps a
paused turn unchanged), and the server goes on; at most `MAX_REQUESTS` requests per call.
The searches' price is in the side requests' usage (`server_tool_use.web_search_requests`),
so the session's cost counts it. Only an Anthropic provider has the server tool: elsewhere
WebSearch is not offered (`ToolContext.web.search` is None).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic import BaseModel, Field

from ...messages.api_types import ApiServerTool
from ...messages.blocks import (
    AssistantContentBlock,
    TextBlock,
    WebSearchToolResultBlock,
)
from ...messages.constructors import assistant_message, user_message
from ...messages.normalize import normalize_messages_for_api
from ...messages.types import Message
from ...messages.usage import Usage
from ...providers.base import ModelRequest, complete
from ..base import (
    BaseTool,
    PermissionDecision,
    ToolContext,
    ToolError,
    ToolProgress,
    ToolResult,
)
from ..services import SideModel
from ._common import StrictInput, field_of

PURPOSE = "web_search"
"""The side request's purpose in the session's usage records."""
WEB_SEARCH_TOOL_TYPE = "web_search_20250305"
"""The server tool's version: the one Claude Code sends, served on every model with web
search (the newer `web_search_20260209`/`20260318` add dynamic filtering on recent models)."""
MAX_USES = 8
"""Searches the server may run per request (Claude Code's `max_uses`)."""
MAX_SEARCH_TOKENS = 8_192
"""The side request's output limit: the model's short summary of what it found."""
MAX_REQUESTS = 4
"""Requests per call: the first and up to three continuations of a paused turn."""
SEARCH_SYSTEM = "You are an assistant for performing a web search tool use"
NO_THINKING = {"type": "disabled"}
"""Claude Code's search request does not think (a model that thinks by default would)."""
QUERY_PREFIX = "Perform a web search for the query: "
"""Claude Code's wording; gateways that run the search themselves recognise it."""

DESCRIPTION = """Searches the web and returns the results: links (title and URL) and a short
summary written from them.

- query: what to search for (at least 2 characters). Mind today's date (see the
  environment) when the question is about recent events or versions.
- allowed_domains / blocked_domains: only, or never, results from these domains (one of
  the two, not both).
- After answering from the results, cite the sources you used as markdown links.
- Use WebFetch to read a page the results point to."""


class WebSearchInput(StrictInput):
    query: str = Field(min_length=2, description="The search query to use")
    allowed_domains: list[str] | None = Field(
        default=None, description="Only include search results from these domains"
    )
    blocked_domains: list[str] | None = Field(
        default=None, description="Never include search results from these domains"
    )


class WebSearchTool(BaseTool[WebSearchInput]):
    """The WebSearch tool."""

    name = "WebSearch"
    description = DESCRIPTION
    input_model: type[BaseModel] = WebSearchInput
    read_only = True
    concurrency_safe = True

    def permission_subject(self, input: Any) -> str | None:
        return str(field_of(input, "query") or "") or None

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        if input.allowed_domains and input.blocked_domains:
            return "Give allowed_domains or blocked_domains, not both (the search takes one)."
        return None

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        return PermissionDecision("ask", "WebSearch searches the web (each search is billed)")

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        search = ctx.web.search
        if search is None:
            raise ToolError("WebSearch is not available with this model provider.")
        started = time.monotonic()
        tool = server_tool(input.allowed_domains, input.blocked_domains)
        blocks, usage = await run_search(search, tool, input.query, ctx)
        text, failed = format_results(input.query, blocks)
        data = {
            "query": input.query,
            "searches": usage.web_search_requests,
            "durationSeconds": round(time.monotonic() - started, 3),
        }
        yield ToolResult(content=text, is_error=failed, data=data)


async def run_search(
    search: SideModel, tool: ApiServerTool, query: str, ctx: ToolContext
) -> tuple[list[AssistantContentBlock], Usage]:
    """The side conversation: the query, then the paused turn sent back while the server
    pauses (at most `MAX_REQUESTS` requests). Every response's blocks, and their usage."""
    history: list[Message] = [user_message(QUERY_PREFIX + query)]
    blocks: list[AssistantContentBlock] = []
    usage = Usage()
    for _ in range(MAX_REQUESTS):
        request = ModelRequest(
            model=search.model,
            max_tokens=MAX_SEARCH_TOKENS,
            system=[{"type": "text", "text": SEARCH_SYSTEM}],
            messages=normalize_messages_for_api(history, [dict(tool)], thinking=NO_THINKING),
            server_tools=[tool],
            thinking=NO_THINKING,
        )
        response = await complete(search.provider, request, ctx.abort)
        usage = usage + response.usage
        blocks.extend(response.content)
        if response.stop_reason != "pause_turn":
            break
        history.append(assistant_message(response.content, stop_reason="pause_turn"))
    return blocks, usage


def server_tool(allowed: Sequence[str] | None, blocked: Sequence[str] | None) -> ApiServerTool:
    """The server's web search tool definition for one call."""
    tool: ApiServerTool = {
        "type": WEB_SEARCH_TOOL_TYPE,
        "name": "web_search",
        "max_uses": MAX_USES,
    }
    if allowed:
        tool["allowed_domains"] = list(allowed)
    if blocked:
        tool["blocked_domains"] = list(blocked)
    return tool


def format_results(query: str, blocks: Sequence[AssistantContentBlock]) -> tuple[str, bool]:
    """The WebSearch result: the model's text and each search's links, in order (Claude
    Code's shape: links as a JSON list of title and url); True when no search succeeded."""
    parts = [f'Web search results for query: "{query}"']
    searched = errors = 0
    for block in blocks:
        if isinstance(block, TextBlock) and block.text.strip():
            parts.append(block.text.strip())
        elif isinstance(block, WebSearchToolResultBlock):
            searched += 1
            if block.error_code is not None:
                errors += 1
                parts.append(f"Web search error: {block.error_code}")
            elif not block.results:
                parts.append("No links found.")
            else:
                links = [{"title": hit.title, "url": hit.url} for hit in block.results]
                parts.append("Links: " + json.dumps(links, ensure_ascii=False))
    if searched == 0:
        parts.append("No search was run.")
    failed = searched > 0 and errors == searched
    if not failed:
        parts.append("Cite the sources you use from these results as markdown links.")
    return "\n\n".join(parts), failed
