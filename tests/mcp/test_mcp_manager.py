"""McpManager against REAL MCP servers started by the tests (stdio, streamable HTTP, SSE)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from mcp_support import SERVERS, served
from queryloop.config import McpServerConfig, load_mcp_config
from queryloop.messages import UserMessage
from queryloop.messages.blocks import ImageBlock, TextBlock, ToolResultBlock, ToolUseBlock
from queryloop.permissions import PermissionChecker, PermissionContext, RuleSet
from queryloop.tools.base import Tool, ToolContext, ToolResult
from queryloop.tools.execution import run_tool_call
from queryloop.tools.mcp import McpManager, McpUnavailable, describe_statuses, tool_name


def stdio(name: str, script: str, *args: str) -> McpServerConfig:
    return McpServerConfig(name, command=sys.executable, args=(str(SERVERS / script), *args))


def _alive(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


async def run_tool(tool: Tool, args: dict[str, object], ctx: ToolContext) -> ToolResult:
    results = [item async for item in tool.call(tool.input_model.model_validate(args), ctx)]
    assert isinstance(results[-1], ToolResult)
    return results[-1]


@pytest.fixture
async def manager() -> AsyncIterator[McpManager]:
    servers = {
        "echo": stdio("echo", "echo_server.py"),
        "other": stdio("other", "echo_server.py"),
        "broken": stdio("broken", "crash_on_start.py"),
        "missing": McpServerConfig("missing", command="/nonexistent/mcp-server"),
    }
    async with McpManager(servers, call_timeout=20) as m:
        yield m


async def _statuses_tools_and_instructions(manager: McpManager) -> None:
    status = manager.statuses()
    assert status["echo"].state == "connected" and status["echo"].tool_count == 6
    assert status["broken"].state == "failed"
    assert "missing DATABASE_URL" in status["broken"].message  # the server's stderr is quoted
    assert status["missing"].state == "failed" and "failed to start" in status["missing"].message
    assert len(describe_statuses(list(status.values()))) == 2
    names = [t.name for t in manager.tools()]
    assert names == sorted(names) and "mcp__echo__echo" in names and "mcp__other__slow" in names
    assert not any("broken" in n for n in names)
    echo = next(t for t in manager.tools() if t.name == "mcp__echo__echo")
    assert json.dumps(echo.input_schema()) == json.dumps(
        manager.tools()[names.index(echo.name)].input_schema()
    )
    assert echo.input_schema()["required"] == ["text"]
    assert echo.is_concurrency_safe({}) and echo.is_read_only({})
    slow = next(t for t in manager.tools() if t.name == "mcp__echo__slow")
    assert not slow.is_concurrency_safe({})
    assert manager.instructions() == {
        "echo": "Use echo to repeat text. Use slow only in tests.",
        "other": "Use echo to repeat text. Use slow only in tests.",
    }
    assert isinstance(echo, Tool)


async def test_one_session_with_several_servers(manager: McpManager, tmp_path: Path) -> None:
    """One manager (server start-up is the slow part): listing, calls, timeouts, resources."""
    await _statuses_tools_and_instructions(manager)
    await _calls_and_result_conversion(manager, tmp_path)
    await _through_executor(manager, tmp_path)
    await _call_timeout(manager)
    await _resources(manager)


async def _calls_and_result_conversion(manager: McpManager, tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    tools = {t.name: t for t in manager.tools()}
    ok = await run_tool(tools["mcp__echo__echo"], {"text": "hi", "times": 2}, ctx)
    assert (ok.content, ok.is_error) == ("hi hi", False)
    failed = await run_tool(tools["mcp__echo__fail"], {"reason": "disk full"}, ctx)
    assert failed.is_error and "disk full" in str(failed.content)
    picture = await run_tool(tools["mcp__echo__picture"], {}, ctx)
    assert isinstance(picture.content, tuple)
    assert isinstance(picture.content[0], TextBlock) and isinstance(picture.content[1], ImageBlock)
    assert picture.content[1].source["media_type"] == "image/png"
    unknown = await manager.call_tool("nope", "echo", {})
    assert unknown.is_error and "unavailable" in str(unknown.content)


async def _through_executor(manager: McpManager, tmp_path: Path) -> None:
    """MCP tools go through the real executor and the permission checker like any tool."""
    block = ToolUseBlock(id="toolu_1", name="mcp__echo__echo", input={"text": "via executor"})
    ctx = ToolContext(cwd=tmp_path)

    async def result_of(rules: RuleSet) -> ToolResultBlock:
        checker = PermissionChecker(PermissionContext(rules=rules, home=tmp_path))
        messages = [m async for m in run_tool_call(block, manager.tools(), ctx, permission=checker)]
        first = messages[0]  # the tool_result first; a refusal's record follows it
        assert isinstance(first, UserMessage)
        content = first.content
        assert isinstance(content, tuple) and isinstance(content[0], ToolResultBlock)
        return content[0]

    allowed = await result_of(RuleSet.from_strings(allow=["mcp__echo"]))
    assert (allowed.content, allowed.is_error) == ("via executor", False)
    denied = await result_of(RuleSet())
    assert denied.is_error and "--allowed-tools 'mcp__echo__echo'" in str(denied.content)


async def _call_timeout(manager: McpManager) -> None:
    result = await manager.call_tool("echo", "slow", {"seconds": 30}, timeout=0.5)
    assert result.is_error and "timed out after 0.5s" in str(result.content)
    again = await manager.call_tool("echo", "echo", {"text": "still here"})
    assert again.content == "still here"


async def test_server_dying_mid_session(manager: McpManager, tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    ctx.abort.abort("user")  # an interrupted call returns at once with an error result
    slow = next(t for t in manager.tools() if t.name == "mcp__other__slow")
    interrupted = await run_tool(slow, {"seconds": 30}, ctx)
    assert interrupted.is_error and "interrupted" in str(interrupted.content)
    assert (await manager.call_tool("other", "echo", {"text": "ok"})).content == "ok"
    died = await manager.call_tool("other", "die", {})
    assert died.is_error and "unavailable" in str(died.content)
    assert manager.statuses()["other"].state == "failed"
    later = await manager.call_tool("other", "echo", {"text": "x"})
    assert later.is_error and "is unavailable" in str(later.content)
    alive = await manager.call_tool("echo", "echo", {"text": "the session goes on"})
    assert alive.content == "the session goes on" and not alive.is_error


async def _resources(manager: McpManager) -> None:
    resources = await manager.list_resources("echo")
    assert [(r.server, r.uri, r.name) for r in resources] == [("echo", "memo://notes", "notes")]
    assert len(await manager.list_resources()) == 2  # echo and other
    blocks = await manager.read_resource("echo", "memo://notes")
    assert isinstance(blocks[0], TextBlock) and "remember the milk" in blocks[0].text
    with pytest.raises(McpUnavailable, match="broken"):
        await manager.read_resource("broken", "memo://notes")


async def test_clean_shutdown_leaves_no_process(tmp_path: Path) -> None:
    async with McpManager({"echo": stdio("echo", "echo_server.py")}, cwd=tmp_path) as m:
        result = await m.call_tool("echo", "pid", {})
        pid = int(str(result.content))
        assert _alive(pid)
        assert Path(f"/proc/{pid}/cwd").resolve() == tmp_path.resolve()  # started in the project
    assert m.statuses()["echo"].state == "closed"
    assert not _alive(pid)


async def test_connect_timeout() -> None:
    async with McpManager({"silent": stdio("silent", "silent.py")}, connect_timeout=1) as m:
        status = m.statuses()["silent"]
        assert status.state == "failed" and "did not connect within 1 s" in status.message
        assert m.tools() == []


def test_mcp_json_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TOKEN", "s3cret")
    path = tmp_path / ".mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {
                        "command": "python",
                        "args": ["srv.py", "${MY_TOKEN}"],
                        "env": {"T": "${NOPE:-dflt}"},
                    },
                    "remote": {
                        "type": "http",
                        "url": "http://127.0.0.1:1/mcp",
                        "headers": {"Authorization": "Bearer ${MY_TOKEN}"},
                    },
                    "bad name!": {"command": "x"},
                    "sse": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
                    "ws": {"type": "ws", "url": "ws://x"},
                    "pinned": {
                        "type": "sse",
                        "url": "http://127.0.0.1:1/sse",
                        "oauth": {"callbackPort": 8765, "scopes": "read write"},
                    },
                    "badport": {"type": "http", "url": "http://x", "oauth": {"callbackPort": 0}},
                    "nocmd": {"args": []},
                }
            }
        )
    )
    servers, problems = load_mcp_config(path)
    assert servers["files"].args == ("srv.py", "s3cret") and servers["files"].env == {"T": "dflt"}
    assert servers["remote"].transport == "http" and servers["sse"].transport == "sse"
    assert servers["remote"].headers == {"Authorization": "Bearer s3cret"}
    assert servers["pinned"].oauth.callback_port == 8765
    assert servers["pinned"].oauth.scopes == "read write"
    assert len(problems) == 4 and any("not supported" in p for p in problems)
    assert any("mcpServers.badport: 'oauth.callbackPort' must be a port" in p for p in problems)
    broken = tmp_path / "broken.json"
    broken.write_text('{"mcpServers": {')
    assert "broken.json:1:" in load_mcp_config(broken)[1][0]
    assert tool_name("my.server", "do it") == "mcp__my_server__do_it"
    assert len(tool_name("s", "x" * 100)) == 64


@pytest.fixture
def http_port() -> Iterator[int]:
    """A real streamable-HTTP MCP server on 127.0.0.1 in a subprocess."""
    with served("echo_server.py", "http") as port:
        yield port


async def test_streamable_http_server(http_port: int) -> None:
    url = f"http://127.0.0.1:{http_port}/mcp"
    config = McpServerConfig("web", "http", url=url, headers={"X-Test": "1"})
    async with McpManager({"web": config}, call_timeout=20) as m:
        assert m.statuses()["web"].state == "connected", m.statuses()["web"].message
        assert "mcp__web__echo" in [t.name for t in m.tools()]
        result = await m.call_tool("web", "echo", {"text": "over http"})
        assert result.content == "over http"
        assert "web" in m.instructions()
