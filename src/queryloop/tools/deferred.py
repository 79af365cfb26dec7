"""Deferred tools: announced by name, loaded on demand, so the tools array stays stable.

A large or changing set of tools (typically MCP tools) would make every request carry all of
their schemas, and every server that connects or leaves would change the tools array -- the
very start of the cache prefix -- and force a full cache rewrite. Instead:

1. The session's tools array holds the eager tools plus `ToolSearch`, never the deferred ones.
2. The model learns the deferred tools' *names* from `deferred_tools_delta` attachments
   (`AttachmentContext.deferred_tools`), which are messages, not tools.
3. The model calls `ToolSearch {query, max_results}`; it answers with the matching tools' full
   definitions and records their names in `ToolContext.loaded_deferred_tools`.
4. `RequestBuilder(deferred_tools=..., tool_context=...)` appends the loaded ones at the END of
   the tools array, in load order (or pass `loaded_deferred_tools(ctx, deferred)` as
   `extra_tools` to `build`): the bytes of every earlier tool stay put.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from .base import Tool, ToolContext

DeferredSource = Sequence[Tool] | Callable[[], Sequence[Tool]]
"""The deferred tools, or a callable returning the current ones (servers come and go)."""

MCP_TOOL_PREFIX = "mcp__"


def is_mcp_tool(tool: Tool) -> bool:
    """True for tools named `mcp__<server>__<tool>` (the default candidates for deferral)."""
    return tool.name.startswith(MCP_TOOL_PREFIX)


def partition_tools(
    tools: Sequence[Tool], *, defer: Callable[[Tool], bool] = is_mcp_tool
) -> tuple[list[Tool], list[Tool]]:
    """(eager, deferred): the tools to send up front and those to load through ToolSearch."""
    eager = [t for t in tools if not defer(t)]
    deferred = [t for t in tools if defer(t)]
    return eager, deferred


def loaded_tool_names(ctx: ToolContext) -> list[str]:
    """Names of the deferred tools loaded so far in this session, in load order."""
    return list(ctx.loaded_deferred_tools)


def mark_loaded(ctx: ToolContext, names: Iterable[str]) -> list[str]:
    """Record `names` as loaded (keeping the first load order); returns the newly loaded."""
    loaded = ctx.loaded_deferred_tools
    new = [n for n in dict.fromkeys(names) if n not in loaded]
    loaded.extend(new)
    return new


def current_deferred(source: DeferredSource) -> list[Tool]:
    """The deferred tools available now."""
    return list(source() if callable(source) else source)


def loaded_deferred_tools(ctx: ToolContext, deferred: DeferredSource) -> list[Tool]:
    """The loaded deferred tools still available, in load order (pass as `extra_tools`)."""
    by_name = {t.name: t for t in current_deferred(deferred)}
    return [by_name[n] for n in loaded_tool_names(ctx) if n in by_name]


def search_tools(query: str, tools: Sequence[Tool], max_results: int = 5) -> list[Tool]:
    """The tools matching `query`, best first, at most `max_results`.

    `select:A,B` picks tools by exact name. Otherwise the query is keywords: a term prefixed
    with `+` must occur in the name; other terms score by where they occur (an exact name
    beats a name part, which beats the name, which beats the description).
    """
    query = query.strip()
    if query.lower().startswith("select:"):
        wanted = [w.strip() for w in query[len("select:") :].split(",") if w.strip()]
        by_name = {t.name: t for t in tools}
        return [by_name[w] for w in dict.fromkeys(wanted) if w in by_name][:max_results]
    terms = [t.lower() for t in query.split() if t.strip("+")]
    required = [t[1:] for t in terms if t.startswith("+")]
    optional = [t.lstrip("+") for t in terms]
    scored = [
        (score, tool.name, tool)
        for tool in tools
        if all(r in tool.name.lower() for r in required)
        and (score := _score(tool, optional, query.lower())) > 0
    ]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [tool for _, _, tool in scored[:max_results]]


def _score(tool: Tool, terms: Sequence[str], whole: str) -> int:
    name = tool.name.lower()
    if name == whole:
        return 1_000
    parts = set(re.split(r"__|_|-|\.", name))
    description = tool.description.lower()
    score = 0
    for term in terms:
        if term in parts:
            score += 12
        elif term in name:
            score += 6
        if term in description:
            score += 2
    return score
