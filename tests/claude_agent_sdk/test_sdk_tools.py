"""In-process tools: `@tool` + `create_sdk_mcp_server` become queryloop tools named
`mcp__<server>__<tool>`, asked about like MCP tools, run in this process."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, NotRequired, TypedDict

import pytest

from queryloop.claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ClaudeSDKError,
    ResultMessage,
    ToolAnnotations,
    ToolResultBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)
from queryloop.testing import MessagesServer, text, tool_use, turn

ECHO_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "echo_server.py"
CALLS: list[dict[str, Any]] = []


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    CALLS.append(args)
    return {"content": [{"type": "text", "text": f"{args['a'] + args['b']}"}]}


@tool("divide", "Divide a by b", {"a": float, "b": float})
async def divide(args: dict[str, Any]) -> dict[str, Any]:
    if args["b"] == 0:
        return {"content": [{"type": "text", "text": "Error: division by zero"}], "is_error": True}
    return {"content": [{"type": "text", "text": f"{args['a'] / args['b']}"}]}


@tool("explode", "Always raises", {})
async def explode(args: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("the tool broke")


class SearchInput(TypedDict):
    query: Annotated[str, "What to look for"]
    limit: NotRequired[int]


@tool(
    "search",
    "Search the notes",
    SearchInput,
    # The camelCase alias, as SDK users write it (mypy sees only the field names).
    annotations=ToolAnnotations(readOnlyHint=True, max_result_size_chars=12),  # type: ignore[call-arg]
)
async def search(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"found {args['query']} " * 10}]}


@tool(
    "lookup",
    "Look up a key",
    {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
)
async def lookup(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": "value"}]}


@pytest.fixture(autouse=True)
def _clear() -> None:
    CALLS.clear()


def calculator(**extra: Any) -> ClaudeAgentOptions:
    server = create_sdk_mcp_server("calculator", "2.0.0", [add, divide, explode, search, lookup])
    servers: dict[str, Any] = {"calc": server}
    return ClaudeAgentOptions(mcp_servers=servers, **extra)


def results(messages: list[Any]) -> list[ToolResultBlock]:
    return [
        b
        for m in messages
        if isinstance(m, UserMessage)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]


async def run(prompt: str, options: ClaudeAgentOptions) -> list[Any]:
    async with ClaudeSDKClient(options) as client:
        await client.query(prompt)
        messages = [m async for m in client.receive_response()]
    return messages


async def test_tools_are_offered_with_their_schemas_under_mcp_names(
    sdk_server: MessagesServer,
) -> None:
    sdk_server.script([turn(text("I have a calculator."))])

    await run("List your tools", calculator())

    tools = {t["name"]: t for t in sdk_server.requests[0]["tools"]}
    assert tools["mcp__calc__add"]["description"] == "Add two numbers"
    assert tools["mcp__calc__add"]["input_schema"] == {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    }
    assert tools["mcp__calc__search"]["input_schema"] == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for"},
            "limit": {"type": "integer"},
        },
        "required": ["query"],
    }
    assert tools["mcp__calc__lookup"]["input_schema"]["required"] == ["key"]


async def test_an_allowed_tool_runs_in_this_process(sdk_server: MessagesServer) -> None:
    sdk_server.script(
        [turn(tool_use("mcp__calc__add", {"a": 15, "b": 27}, id="toolu_1")), turn(text("42"))]
    )

    messages = await run("15 + 27?", calculator(allowed_tools=["mcp__calc__add"]))

    assert CALLS == [{"a": 15, "b": 27}]
    [result] = results(messages)
    assert (result.tool_use_id, result.content, result.is_error) == ("toolu_1", "42", False)
    final = messages[-1]
    assert isinstance(final, ResultMessage) and final.result == "42"


async def test_without_an_allow_rule_an_mcp_tool_is_refused_headless(
    sdk_server: MessagesServer,
) -> None:
    """As in Claude Code: an MCP tool asks; nobody can answer, so it is refused and the
    function never runs (allowed_tools approves it; it does not make it available)."""
    sdk_server.script([turn(tool_use("mcp__calc__add", {"a": 1, "b": 2})), turn(text("no"))])

    messages = await run("1 + 2?", calculator())

    assert CALLS == []
    [result] = results(messages)
    assert result.is_error and "mcp__calc__add" in str(result.content)
    final = messages[-1]
    assert isinstance(final, ResultMessage)
    assert [d["tool_name"] for d in final.permission_denials or []] == ["mcp__calc__add"]


async def test_errors_reach_the_model_as_error_results(sdk_server: MessagesServer) -> None:
    sdk_server.script(
        [
            turn(
                tool_use("mcp__calc__divide", {"a": 1, "b": 0}),
                tool_use("mcp__calc__explode", {}),
                tool_use("mcp__calc__add", {"a": "one", "b": 2}),
            ),
            turn(text("All three failed.")),
        ]
    )

    messages = await run("try", calculator(permission_mode="bypassPermissions"))

    divided, exploded, invalid = results(messages)
    assert divided.is_error and divided.content == "Error: division by zero"
    assert exploded.is_error and "the tool broke" in str(exploded.content)
    assert invalid.is_error and "Input validation error" in str(invalid.content)
    assert CALLS == []  # the invalid call never reached the function


async def test_annotations_make_a_tool_read_only_and_cap_its_result(
    sdk_server: MessagesServer,
) -> None:
    sdk_server.script([turn(tool_use("mcp__calc__search", {"query": "x"})), turn(text("ok"))])

    messages = await run("search", calculator(allowed_tools=["mcp__calc__search"]))

    [result] = results(messages)
    assert not result.is_error and "found x" in str(result.content)
    from queryloop.claude_agent_sdk.tools import SdkTool

    # readOnlyHint: runs beside other read-only calls; unannotated tools run alone
    assert SdkTool("calc", search).is_concurrency_safe({}) and SdkTool("calc", search).is_read_only(
        {}
    )
    assert not SdkTool("calc", add).is_concurrency_safe({})
    sent = sdk_server.requests[1]["messages"][-1]["content"]
    wire = next(b for b in sent if b["type"] == "tool_result")
    # over maxResultSizeChars: saved to a file, the model gets a preview and the path
    assert str(wire["content"]).startswith("<persisted-output>\nOutput too large: 80 char")


async def test_in_process_and_stdio_servers_together(sdk_server: MessagesServer) -> None:
    sdk_server.script(
        [
            turn(
                tool_use("mcp__calc__add", {"a": 1, "b": 1}),
                tool_use("mcp__echo__echo", {"text": "hi"}),
            ),
            turn(text("2 and hi")),
        ]
    )
    servers: dict[str, Any] = {
        "calc": create_sdk_mcp_server("calculator", tools=[add]),
        "echo": {"type": "stdio", "command": sys.executable, "args": [str(ECHO_SERVER)]},
    }
    options = ClaudeAgentOptions(
        mcp_servers=servers, allowed_tools=["mcp__calc__add", "mcp__echo__echo"]
    )

    messages = [m async for m in query(prompt="add and echo", options=options)]

    init = messages[0]
    assert init.data["mcp_servers"] == [  # type: ignore[union-attr]
        {"name": "calc", "status": "connected"},
        {"name": "echo", "status": "connected"},
    ]
    added, echoed = results(messages)
    assert (added.content, echoed.content) == ("2", "hi")


def test_declarations_queryloop_cannot_use_are_refused_when_declared() -> None:
    with pytest.raises(TypeError, match="must be async"):
        tool("sync", "not async", {})(lambda args: {})  # type: ignore[arg-type, return-value]
    with pytest.raises(ValueError, match="used twice"):
        create_sdk_mcp_server("dup", tools=[add, add])
    with pytest.raises(TypeError, match="cannot describe the type"):

        @tool("when", "A date", {"day": Path})
        async def when(args: dict[str, Any]) -> dict[str, Any]:
            return {}

        from queryloop.claude_agent_sdk.tools import SdkTool

        SdkTool("x", when)


async def test_get_mcp_status_lists_each_server_its_state_and_tools(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    servers: dict[str, Any] = {
        "calc": create_sdk_mcp_server("calculator", tools=[add, divide]),
        "echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]},
        "broken": {"command": sys.executable, "args": [str(tmp_path / "missing.py")]},
    }
    async with ClaudeSDKClient(ClaudeAgentOptions(mcp_servers=servers)) as client:
        status = await client.get_mcp_status()
        with pytest.raises(ClaudeSDKError, match=r"toggle_mcp_server.*not supported"):
            await client.toggle_mcp_server("echo", False)
        # reconnect_mcp_server raises when the reconnection fails (the SDK's contract) ...
        with pytest.raises(ClaudeSDKError, match=r"MCP server 'broken' .*failed to start"):
            await client.reconnect_mcp_server("broken")
        with pytest.raises(ClaudeSDKError, match=r"no MCP server 'nope'"):
            await client.reconnect_mcp_server("nope")
        # ... and a server fixed meanwhile joins the session.
        (tmp_path / "missing.py").symlink_to(ECHO_SERVER)
        await client.reconnect_mcp_server("broken")
        fixed = {s["name"]: s for s in (await client.get_mcp_status())["mcpServers"]}["broken"]

    by_name = {s["name"]: s for s in status["mcpServers"]}
    assert [t["name"] for t in by_name["calc"]["tools"]] == ["add", "divide"]
    assert by_name["calc"]["status"] == by_name["echo"]["status"] == "connected"
    assert "echo" in [t["name"] for t in by_name["echo"]["tools"]]
    assert by_name["broken"]["status"] == "failed" and by_name["broken"]["error"]
    assert fixed["status"] == "connected" and "echo" in [t["name"] for t in fixed["tools"]]
