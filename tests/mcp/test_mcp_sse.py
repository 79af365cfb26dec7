"""MCP over the older HTTP+SSE transport (`"type": "sse"`, as Claude Code reads it): a real
server of the `mcp` package's own (its SSE app under uvicorn) on 127.0.0.1, through the real
Agent and the official SDK against the local Messages server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_support import agent_on
from mcp_support import served
from queryloop.testing import MessagesServer, text, tool_use, turn

pytestmark = pytest.mark.usefixtures("api_key")


@pytest.fixture
def sse_port() -> Iterator[int]:
    """The echo server speaking HTTP+SSE on a free loopback port."""
    with served("echo_server.py", "sse") as port:
        yield port


async def test_an_sse_server_in_mcp_json_is_listed_and_called(
    sse_port: int, tmp_path: Path
) -> None:
    config = tmp_path / "mcp.json"
    url = f"http://127.0.0.1:{sse_port}/sse"
    config.write_text(json.dumps({"mcpServers": {"old": {"type": "sse", "url": url}}}))
    script = [turn(tool_use("mcp__old__echo", {"text": "via sse", "times": 2})), turn(text("ok"))]
    with MessagesServer(script) as server:
        agent = agent_on(server, tmp_path, mcp_config=config, allowed_tools=["mcp__old"])
        try:
            await agent.run("echo over sse")
        finally:
            await agent.aclose()
        first, second = server.requests
    assert "mcp__old__echo" in [t["name"] for t in first["tools"]]
    [result] = [b for b in second["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert result["content"] == "via sse via sse" and not result.get("is_error")
