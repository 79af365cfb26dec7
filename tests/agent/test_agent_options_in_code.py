"""Agent options given in code rather than in files: MCP servers (`mcp_servers`), more
working folders (`add_dirs`), a permission mode switched mid-session, and the tool call a
permission request is about (`PermissionRequest.tool_use_id`). Real loop, real tools, a
real stdio MCP server, the official SDK over HTTP against the local server."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import local_agent

from queryloop.errors import ConfigError
from queryloop.permissions.checker import PermissionAllow, PermissionRequest
from queryloop.testing import MessagesServer, text, tool_use, turn

ECHO_SERVER = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "echo_server.py"


pytestmark = pytest.mark.usefixtures("api_key")


def last_result(body: Mapping[str, Any]) -> dict[str, Any]:
    [block] = [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    return dict(block)


async def test_mcp_servers_given_in_code_are_started_and_offered(tmp_path: Path) -> None:
    servers = {"echo": {"command": sys.executable, "args": [str(ECHO_SERVER)]}}
    script = [turn(tool_use("mcp__echo__echo", {"text": "hi", "times": 2})), turn(text("done"))]
    with MessagesServer(script) as server:
        agent = local_agent(server, tmp_path, mcp_servers=servers, allowed_tools=["mcp__echo"])
        try:
            await agent.run("echo hi twice")
        finally:
            await agent.aclose()
        bodies = server.requests
    assert "mcp__echo__echo" in [t["name"] for t in bodies[0]["tools"]]
    assert last_result(bodies[1])["content"] == "hi hi"


async def test_a_broken_mcp_server_entry_in_code_stops_the_session(tmp_path: Path) -> None:
    with MessagesServer([]) as server:
        agent = local_agent(server, tmp_path, mcp_servers={"bad": {"command": ""}})
        with pytest.raises(ConfigError, match=r"mcpServers\.bad: 'command' must be"):
            await agent.start()
        await agent.aclose()


async def test_add_dirs_lets_the_agent_read_another_folder_without_asking(
    tmp_path: Path,
) -> None:
    project, shared = tmp_path / "project", tmp_path / "shared"
    project.mkdir()
    shared.mkdir()
    (shared / "spec.md").write_text("the spec\n")
    target = str(shared / "spec.md")
    script = [turn(tool_use("Read", {"file_path": target})), turn(text("ok"))] * 2
    with MessagesServer(script) as server:
        for extra in ([], ["../shared"]):  # relative to cwd, like --add-dir
            agent = local_agent(server, project, add_dirs=extra)
            try:
                await agent.run("read the spec")
            finally:
                await agent.aclose()
        without, with_dir = last_result(server.requests[1]), last_result(server.requests[3])
    assert without.get("is_error") and "denied" in str(without["content"])
    assert not with_dir.get("is_error") and "the spec" in str(with_dir["content"])


async def test_set_permission_mode_applies_to_the_next_call(tmp_path: Path) -> None:
    script = [
        turn(tool_use("Write", {"file_path": "a.txt", "content": "A"})),
        turn(text("refused")),
        turn(tool_use("Write", {"file_path": "b.txt", "content": "B"})),
        turn(text("written")),
    ]
    with MessagesServer(script) as server:
        agent = local_agent(server, tmp_path)
        try:
            await agent.run("write a")  # default mode, nobody to ask: refused
            await agent.set_permission_mode("acceptEdits")
            assert agent.permission_mode == "acceptEdits"
            await agent.run("write b")
            with pytest.raises(ConfigError, match="unknown permission mode"):
                await agent.set_permission_mode("dontAsk")
        finally:
            await agent.aclose()
    assert not (tmp_path / "a.txt").exists()
    assert (tmp_path / "b.txt").read_text() == "B"


async def test_a_permission_request_names_its_tool_call(tmp_path: Path) -> None:
    asked: list[PermissionRequest] = []

    def approve(name: str, input: Mapping[str, Any], request: PermissionRequest) -> Any:
        asked.append(request)
        return PermissionAllow()

    script = [
        turn(tool_use("Write", {"file_path": "a.txt", "content": "A"}, id="toolu_w1")),
        turn(text("done")),
    ]
    with MessagesServer(script) as server:
        agent = local_agent(server, tmp_path, can_use_tool=approve)
        try:
            await agent.run("write a")
        finally:
            await agent.aclose()
    [request] = asked
    assert (request.tool_use_id, request.agent_id) == ("toolu_w1", None)
