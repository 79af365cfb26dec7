"""Deferred tools: ToolSearch loads definitions; loaded tools join the END of the tools array."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from queryloop.context import (
    AttachmentContext,
    RequestBuilder,
    build_system_prompt,
    get_attachments,
    loaded_deferred_tools,
    partition_tools,
    search_tools,
)
from queryloop.messages import user_message, validate_api_request
from queryloop.tools.base import BaseTool, Tool, ToolContext, ToolProgress, ToolResult
from queryloop.tools.builtin.tool_search import ToolSearchTool


class Args(BaseModel):
    text: str


def make_tool(name: str, description: str) -> Tool:
    class T(BaseTool[Args]):
        input_model: type[BaseModel] = Args

        async def call(
            self, input: Any, ctx: ToolContext
        ) -> AsyncIterator[ToolProgress | ToolResult]:
            yield ToolResult(content="ok")

    tool = T()
    tool.name, tool.description = name, description
    return tool


def mcp_tools() -> list[Tool]:
    return [
        make_tool("mcp__slack__send_message", "Send a message to a Slack channel"),
        make_tool("mcp__slack__list_channels", "List Slack channels"),
        make_tool("mcp__github__create_issue", "Create a GitHub issue"),
        make_tool("mcp__github__list_issues", "List issues of a repository"),
    ]


async def run(tool: ToolSearchTool, ctx: ToolContext, **input: Any) -> ToolResult:
    results = [r async for r in tool.call(input, ctx) if isinstance(r, ToolResult)]
    assert len(results) == 1
    return results[0]


def test_search_forms() -> None:
    tools = mcp_tools()

    def names(found: Sequence[Tool]) -> list[str]:
        return [t.name for t in found]

    assert names(search_tools("select:mcp__github__list_issues,nope", tools)) == [
        "mcp__github__list_issues"
    ]
    assert names(search_tools("slack message", tools))[0] == "mcp__slack__send_message"
    assert names(search_tools("+github issue", tools)) == [
        "mcp__github__create_issue",
        "mcp__github__list_issues",
    ]
    assert names(search_tools("issue", tools, max_results=1)) == ["mcp__github__create_issue"]
    assert search_tools("weather", tools) == []


async def test_tool_search_returns_definitions_and_marks_loaded(tmp_path: Path) -> None:
    deferred = mcp_tools()
    search = ToolSearchTool(deferred)
    ctx = ToolContext(cwd=tmp_path)
    result = await run(search, ctx, query="select:mcp__slack__send_message")
    assert isinstance(result.content, str) and result.content.startswith("<functions>")
    definition = json.loads(result.content.split("<function>")[1].split("</function>")[0])
    assert definition["name"] == "mcp__slack__send_message"
    assert definition["parameters"]["properties"]["text"]["type"] == "string"
    assert ctx.loaded_deferred_tools == ["mcp__slack__send_message"]
    assert ctx.extras == {}  # a typed field, not a string key

    await run(search, ctx, query="+github", max_results=5)
    await run(search, ctx, query="select:mcp__slack__send_message")  # already loaded
    assert [t.name for t in loaded_deferred_tools(ctx, deferred)] == [
        "mcp__slack__send_message",
        "mcp__github__create_issue",
        "mcp__github__list_issues",
    ]
    miss = await run(search, ctx, query="weather")
    assert not miss.is_error and "No deferred tool matches" in str(miss.content)


async def test_deferred_tools_keep_the_tools_array_stable(tmp_path: Path) -> None:
    all_tools = [make_tool("Read", "Read a file."), *mcp_tools()]
    eager, deferred = partition_tools(all_tools)
    search = ToolSearchTool(deferred)
    b = RequestBuilder(
        model="m",
        system=build_system_prompt(attribution=None, dynamic_suffix="env", append=None),
        tools=[*eager, search],
    )
    ctx = ToolContext(cwd=tmp_path)
    history = [user_message("post to slack")]
    before = b.build(history, max_tokens=100)
    assert [t["name"] for t in before.tools] == ["Read", "ToolSearch"]

    # The model learns the names through the delta attachment, not through the tools array.
    names = [t.name for t in deferred]
    actx = AttachmentContext(cwd=tmp_path, tool_context=ctx, deferred_tools=names)
    [delta] = await get_attachments(None, actx, history)
    assert delta.data["added_names"] == sorted(names)

    await run(search, ctx, query="select:mcp__slack__send_message")
    after = b.build(history, max_tokens=100, extra_tools=loaded_deferred_tools(ctx, deferred))
    assert [t["name"] for t in after.tools] == ["Read", "ToolSearch", "mcp__slack__send_message"]
    assert json.dumps(list(after.tools)[:2]) == json.dumps(list(before.tools))
    assert validate_api_request(after.to_body()) == []


async def test_builder_appends_loaded_tools_by_itself(tmp_path: Path) -> None:
    connected: list[Tool] = []
    search = ToolSearchTool(lambda: connected)
    ctx = ToolContext(cwd=tmp_path)
    b = RequestBuilder(
        model="m",
        system=build_system_prompt(attribution=None, dynamic_suffix="env", append=None),
        tools=[make_tool("Read", "Read a file."), search],
        deferred_tools=lambda: connected,
        tool_context=ctx,
    )
    history = [user_message("go")]
    assert [t["name"] for t in b.build(history, max_tokens=10).tools] == ["Read", "ToolSearch"]
    connected[:] = mcp_tools()  # a server connected: the tools array does not change
    assert [t["name"] for t in b.build(history, max_tokens=10).tools] == ["Read", "ToolSearch"]
    await run(search, ctx, query="select:mcp__github__list_issues,mcp__slack__list_channels")
    names = [t["name"] for t in b.build(history, max_tokens=10).tools]
    assert names == ["Read", "ToolSearch", "mcp__github__list_issues", "mcp__slack__list_channels"]
    connected[:] = connected[:2]  # github went away: its loaded tool goes with it
    names = [t["name"] for t in b.build(history, max_tokens=10).tools]
    assert names == ["Read", "ToolSearch", "mcp__slack__list_channels"]
