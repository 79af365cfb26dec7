"""OAuth-protected MCP servers: `queryloop mcp login`, the stored tokens, and sessions that
use them. The server is a real one (`servers/oauth_server.py`: the `mcp` package's
server-side auth, its own authorization server, approving at once) on 127.0.0.1; the
browser's part is done by httpx following the printed authorization URL to the loopback
callback. Sessions are the real Agent against the local Messages server."""

from __future__ import annotations

import asyncio
import io
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_support import agent_on
from mcp_support import SERVERS, follow, follow_async, free_port, served
from queryloop.cli.mcp_cmd import mcp_command
from queryloop.config.workspace import load_workspace
from queryloop.testing import MessagesServer, text, tool_use, turn
from queryloop.tools.mcp_login import login
from queryloop.tools.mcp_server import McpLoginError

pytestmark = pytest.mark.usefixtures("api_key")


@pytest.fixture(scope="module")
def oauth_port() -> Iterator[int]:
    """The OAuth-protected server on a free loopback port (one for this file's tests: each
    has its own home, so its own registration and tokens)."""
    with served("oauth_server.py") as port:
        yield port


def mcp_json(path: Path, port: int, *names: str, **entry: Any) -> Path:
    """An MCP config naming the protected server under each of `names` (with `entry`'s keys
    added), and the echo server."""
    servers: dict[str, Any] = {
        name: {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", **entry} for name in names
    }
    servers["echo"] = {"command": sys.executable, "args": [str(SERVERS / "echo_server.py")]}
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def token_files() -> list[Path]:
    return sorted((Path(os.environ["QUERYLOOP_HOME"]) / "mcp-auth").glob("*.json"))


def login_via_cli(config: Path, cwd: Path, name: str) -> str:
    """`queryloop mcp login NAME`, with httpx as the browser; its output."""
    command = [sys.executable, "-m", "queryloop.cli.main", "mcp", "login", name]
    proc = subprocess.Popen(
        [*command, "--mcp-config", str(config), "--cwd", str(cwd)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    for line in proc.stdout:
        lines.append(line)
        if line.strip().startswith("http://"):
            follow(line.strip())
            break
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, "".join(lines) + out + err
    return "".join(lines) + out


async def login_here(config: Path, cwd: Path, name: str = "guarded") -> None:
    """`login()` in this process (what the command runs), with httpx as the browser."""
    workspace = load_workspace(cwd, mcp_config_files=[config])
    result = await login(workspace.mcp_servers[name], follow_async)
    assert result.asked and result.status.state == "connected", result.status.message


async def session(
    server: MessagesServer, cwd: Path, config: Path, name: str = "guarded"
) -> tuple[list[str], dict[str, Any]]:
    """One Agent run that calls server `name`'s tool; its notices and the result the model
    saw."""
    agent = agent_on(server, cwd, mcp_config=config, allowed_tools=[f"mcp__{name}", "mcp__echo"])
    try:
        await agent.run("tell me the secret")
        notices = agent.notices
    finally:
        await agent.aclose()
    [result] = [
        b for b in server.requests[-1]["messages"][-1]["content"] if b["type"] == "tool_result"
    ]
    return notices, result


def listing(config: Path, cwd: Path) -> str:
    """What `queryloop mcp list` prints (run in this process: the command is not what is
    tested here)."""
    out = io.StringIO()
    assert mcp_command(["list", "--mcp-config", str(config), "--cwd", str(cwd)], out) == 0
    return out.getvalue()


async def stats(port: int) -> dict[str, int]:
    """The server's counts of registered clients and refreshes."""
    async with httpx.AsyncClient() as client:
        found: dict[str, int] = (await client.get(f"http://127.0.0.1:{port}/stats")).json()
    return found


def calls(tool: str, **args: Any) -> list[Any]:
    return [turn(tool_use(tool, args)), turn(text("ok"))]


@pytest.mark.slow
async def test_login_stores_private_tokens_and_the_agent_then_uses_the_server(
    oauth_port: int, tmp_path: Path
) -> None:
    config = mcp_json(tmp_path / "mcp.json", oauth_port, "guarded")
    out = login_via_cli(config, tmp_path, "guarded")
    assert "Logged in to 'guarded' (1 tools)" in out
    [path] = token_files()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    stored = json.loads(path.read_text())
    assert stored["tokens"]["access_token"] and stored["client"]["client_id"]
    assert "guarded  http  http://127.0.0.1:" in listing(config, tmp_path)
    assert "/mcp  (logged in)" in listing(config, tmp_path)
    with MessagesServer(calls("mcp__guarded__secret", word="tea")) as server:
        notices, result = await session(server, tmp_path, config)
        tools = [t["name"] for t in server.requests[0]["tools"]]
    assert "mcp__guarded__secret" in tools and not notices
    assert result["content"] == "the secret of tea" and not result.get("is_error")


async def test_without_tokens_the_notice_names_the_login_command(
    oauth_port: int, tmp_path: Path
) -> None:
    config = mcp_json(tmp_path / "mcp.json", oauth_port, "guarded")
    with MessagesServer(calls("mcp__echo__echo", text="still here")) as server:
        notices, result = await session(server, tmp_path, config)
    [notice] = notices
    assert "'guarded'" in notice and "needs login: run `queryloop mcp login guarded`" in notice
    assert result["content"] == "still here"  # the other servers are unaffected
    assert token_files() == []  # nothing half-done was written


async def test_an_expired_token_is_refreshed_silently_and_stored(
    oauth_port: int, tmp_path: Path
) -> None:
    callback = free_port()  # Claude Code's fixed redirect port, for servers that need one
    config = mcp_json(
        tmp_path / "mcp.json", oauth_port, "guarded", oauth={"callbackPort": callback}
    )
    await login_here(config, tmp_path)
    refreshed = (await stats(oauth_port))["refreshes"]
    [path] = token_files()
    before = json.loads(path.read_text())
    assert before["client"]["redirect_uris"] == [f"http://127.0.0.1:{callback}/callback"]
    # Time passes: the server no longer takes the token, and the stored expiry is behind us.
    async with httpx.AsyncClient() as client:
        (await client.post(f"http://127.0.0.1:{oauth_port}/expire")).raise_for_status()
    path.write_text(json.dumps({**before, "expires_at": time.time() - 60}))
    with MessagesServer(calls("mcp__guarded__secret", word="tea")) as server:
        notices, result = await session(server, tmp_path, config)
    assert not notices and result["content"] == "the secret of tea"
    after = json.loads(path.read_text())
    assert after["tokens"]["access_token"] != before["tokens"]["access_token"]
    assert after["expires_at"] > time.time() and after["client"] == before["client"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (await stats(oauth_port))["refreshes"] == refreshed + 1


async def test_a_broken_or_readable_token_file_is_refused_and_left_alone(
    oauth_port: int, tmp_path: Path
) -> None:
    config = mcp_json(tmp_path / "mcp.json", oauth_port, "broken", "open")
    for name in ("broken", "open"):
        await login_here(config, tmp_path, name)
    broken, readable = (
        p for name in ("broken", "open") for p in token_files() if p.name.startswith(name)
    )
    broken.write_text('{"server": "broken", "tokens": {"access_token": ')
    readable.chmod(0o644)
    kept = {p: p.read_bytes() for p in (broken, readable)}
    with MessagesServer(calls("mcp__echo__echo", text="still here")) as server:
        notices, result = await session(server, tmp_path, config, name="echo")
    by_server = {n.split("'")[1]: n for n in notices}
    assert "the token file is broken" in by_server["broken"] and str(broken) in by_server["broken"]
    assert "`queryloop mcp login broken` replaces it" in by_server["broken"]
    assert "mode 0644" in by_server["open"] and "chmod 600" in by_server["open"]
    assert result["content"] == "still here"
    assert {p: p.read_bytes() for p in (broken, readable)} == kept
    listed = listing(config, tmp_path)
    assert "the token file is broken" in listed and "echo  stdio" in listed


async def test_login_to_a_server_that_wants_none_stores_nothing(tmp_path: Path) -> None:
    with served("echo_server.py", "http") as port:
        config = mcp_json(tmp_path / "mcp.json", port, "open")
        workspace = load_workspace(tmp_path, mcp_config_files=[config])

        async def show(url: str) -> None:
            raise AssertionError(f"asked for a login: {url}")

        result = await login(workspace.mcp_servers["open"], show)
    assert result.status.state == "connected" and not result.asked
    assert token_files() == []


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body["tools"]]


async def test_a_login_inside_the_session_brings_the_server_s_tool_to_the_next_request(
    oauth_port: int, tmp_path: Path
) -> None:
    """No tokens at start: the server fails and its notice names both ways to log in. A login
    from inside the session (`Agent.mcp_login`) stores the tokens and reconnects the server in
    the session: the next request carries its tool, at the END of the tools array (the
    cached prefix holds), and a call reaches it. A connected server reconnected
    (`Agent.mcp_reconnect`) keeps its place."""
    config = mcp_json(tmp_path / "mcp.json", oauth_port, "guarded")
    turns = [turn(text("no secret yet")), *calls("mcp__guarded__secret", word="tea")]
    with MessagesServer([*turns, turn(text("same tools"))]) as server:
        agent = agent_on(
            server, tmp_path, mcp_config=config, allowed_tools=["mcp__guarded", "mcp__echo"]
        )
        try:
            await agent.run("hello")
            [notice] = agent.notices
            assert "`queryloop mcp login guarded`" in notice and "`/mcp login guarded`" in notice
            shown: list[str] = []

            async def show(url: str) -> None:
                shown.append(url)
                await follow_async(url)

            result = await agent.mcp_login("guarded", show)
            assert result.asked and len(shown) == 1
            assert (result.status.state, result.status.tool_count) == ("connected", 1)
            assert agent.mcp_status["guarded"].state == "connected"
            await agent.run("tell me the secret")
            echo = await agent.mcp_reconnect("echo")
            assert (echo.state, echo.tool_count) == ("connected", 6)
            await agent.run("again")
        finally:
            await agent.aclose()
    before, asked, answered, after = server.requests
    assert "mcp__guarded__secret" not in tool_names(before)
    assert tool_names(asked) == [*tool_names(before), "mcp__guarded__secret"]
    [result] = [b for b in answered["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert result["content"] == "the secret of tea" and not result.get("is_error")
    assert after["tools"] == asked["tools"]
    assert len(token_files()) == 1


async def test_a_login_or_reconnect_that_cannot_be_tried_says_why(
    oauth_port: int, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = mcp_json(tmp_path / "mcp.json", oauth_port, "pinned", oauth={"callbackPort": port})
        with MessagesServer([]) as server:
            agent = agent_on(server, tmp_path, mcp_config=config)
            try:
                with pytest.raises(McpLoginError, match=r"no MCP server 'nope'.*echo, pinned"):
                    await agent.mcp_login("nope", follow_async)
                with pytest.raises(McpLoginError, match=r"no MCP server 'nope'"):
                    await agent.mcp_reconnect("nope")
                with pytest.raises(McpLoginError, match="'echo' runs over stdio"):
                    await agent.mcp_login("echo", follow_async)
                with pytest.raises(McpLoginError, match=f"port {port} .* in use"):
                    await agent.mcp_login("pinned", follow_async)
                assert agent.mcp_status["echo"].state == "connected"  # the session goes on
            finally:
                await agent.aclose()
    assert token_files() == []


def mcp_loops() -> int:
    """The MCP loops running (each `McpManager` has one: the session's, a login's)."""
    return sum(t.name == "queryloop-mcp" for t in threading.enumerate())


async def test_cancelling_a_login_ends_it_and_frees_the_callback_port(
    oauth_port: int, tmp_path: Path
) -> None:
    """What Ctrl-C in the REPL does to `/mcp login` (tests/cli/test_cli_mcp_login.py): the
    login's own connection and loop end with the call, not when its browser wait times out."""
    callback = free_port()
    config = mcp_json(
        tmp_path / "mcp.json", oauth_port, "guarded", oauth={"callbackPort": callback}
    )
    with MessagesServer([]) as server:
        agent = agent_on(server, tmp_path, mcp_config=config)
        try:
            await agent.start()
            before, shown = mcp_loops(), asyncio.Event()

            async def show(url: str) -> None:
                shown.set()  # and nobody comes back

            login_task = asyncio.create_task(agent.mcp_login("guarded", show))
            await shown.wait()
            assert mcp_loops() == before + 1
            login_task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await login_task
            assert mcp_loops() == before
            with socket.socket() as s:
                s.bind(("127.0.0.1", callback))
            assert agent.mcp_status["guarded"].state == "failed"
        finally:
            await agent.aclose()
    assert token_files() == []
