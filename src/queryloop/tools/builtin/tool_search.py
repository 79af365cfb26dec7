"""ToolSearch: load deferred tools' definitions on demand (see `queryloop.tools.deferred`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

from pydantic import BaseModel, Field

from ..base import BaseTool, Tool, ToolContext, ToolProgress, ToolResult
from ..deferred import DeferredSource, current_deferred, mark_loaded, search_tools

DESCRIPTION = """Fetches the full definitions of deferred tools so you can call them.

Deferred tools are announced to you by name only (in <system-reminder> messages); you cannot
call one until its definition is loaded with this tool. Once loaded, a tool stays available
for the rest of the session.

Query forms:
- "select:Name1,Name2" loads those tools by exact name (preferred when you know the names).
- Keywords, for example "slack message": finds tools whose names or descriptions match.
  Prefix a word with + to require it in the tool name ("+github issue").

The result lists each matching tool's definition inside <functions> tags."""


class ToolSearchInput(BaseModel):
    query: str = Field(description='"select:<name>[,<name>...]" or search keywords')
    max_results: int = Field(default=5, ge=1, le=50, description="At most this many tools")


class ToolSearchTool(BaseTool[ToolSearchInput]):
    """Search the deferred tools; return and load the matches.

    `deferred` is the deferred tool list, or a callable returning the current one (MCP
    servers may come and go during a session).
    """

    name = "ToolSearch"
    description = DESCRIPTION
    input_model: type[BaseModel] = ToolSearchInput
    read_only = True
    concurrency_safe = True

    def __init__(self, deferred: DeferredSource) -> None:
        self._deferred = deferred

    def deferred_tools(self) -> list[Tool]:
        """The deferred tools available now."""
        return current_deferred(self._deferred)

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        args = ToolSearchInput.model_validate(input)
        available = self.deferred_tools()
        matches = search_tools(args.query, available, args.max_results)
        if not matches:
            names = ", ".join(t.name for t in available) or "(none)"
            yield ToolResult(
                content=f"No deferred tool matches {args.query!r}. Deferred tools: {names}"
            )
            return
        mark_loaded(ctx, (t.name for t in matches))
        yield ToolResult(
            content=render_functions(matches),
            data={"loaded": [t.name for t in matches]},
        )


def render_functions(tools: Sequence[Tool]) -> str:
    """Each tool's definition as `<function>{json}</function>` inside `<functions>`."""
    lines = ["<functions>"]
    for tool in tools:
        definition = {
            "description": tool.description,
            "name": tool.name,
            "parameters": tool.input_schema(),
        }
        lines.append(f"<function>{json.dumps(definition, ensure_ascii=False)}</function>")
    lines.append("</functions>")
    return "\n".join(lines)
