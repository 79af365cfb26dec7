"""`McpManager.reconnect(name)` against real stdio servers: one server's connection is closed
and made afresh (its process replaced, its tools listed anew), whatever state it was in, and
the other servers are left as they were."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from mcp_support import SERVERS
from queryloop.config import McpServerConfig
from queryloop.tools.mcp import McpManager


def _alive(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def echo(name: str) -> McpServerConfig:
    return McpServerConfig(name, command=sys.executable, args=(str(SERVERS / "echo_server.py"),))


def switched(name: str, gate: Path, before: str | None, after: str) -> McpServerConfig:
    """A stdio server that runs `after` once `gate` exists and `before` until then (None:
    it exits at once, as a server whose credentials are missing does)."""
    first = f'exec "{sys.executable}" "{SERVERS / before}"' if before else "exit 1"
    script = f'if [ -e "{gate}" ]; then exec "{sys.executable}" "{SERVERS / after}"; fi; {first}'
    return McpServerConfig(name, command="sh", args=("-c", script))


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + 30
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


async def pid_of(manager: McpManager, server: str) -> int:
    result = await manager.call_tool(server, "pid", {})
    assert not result.is_error, result.content
    return int(str(result.content))


def tool_names(manager: McpManager, server: str) -> list[str]:
    return [t.name for t in manager.tools([server])]


async def test_reconnect_replaces_one_connection_and_lists_its_tools_anew(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    servers = {
        "echo": echo("echo"),
        "late": switched("late", gate, None, "echo_server.py"),
        "moves": switched("moves", gate, "echo_server.py", "lookup_server.py"),
    }
    async with McpManager(servers, call_timeout=20, connect_timeout=20) as manager:
        assert manager.statuses()["late"].state == "failed"
        echo_pid, moves_pid = await pid_of(manager, "echo"), await pid_of(manager, "moves")
        assert "mcp__moves__echo" in tool_names(manager, "moves")
        gate.touch()

        # A server that failed at start connects, and its tools are there.
        status = await manager.reconnect("late")
        assert (status.state, status.tool_count) == ("connected", 6), status.message
        assert "mcp__late__echo" in tool_names(manager, "late")
        assert (await manager.call_tool("late", "echo", {"text": "back"})).content == "back"

        # A connected one: the old process ends, the new one's tools replace the old list
        # (the manager's cache of tool lists must not answer with the old ones).
        status = await manager.reconnect("moves")
        assert status.state == "connected", status.message
        assert "mcp__moves__lookup" in tool_names(manager, "moves")
        assert "mcp__moves__echo" not in tool_names(manager, "moves")
        assert "mcp__moves__lookup" in [t.name for t in manager.tools()]
        assert not _alive(moves_pid)

        # The others were left alone.
        assert await pid_of(manager, "echo") == echo_pid
        assert manager.statuses()["echo"].state == "connected"

        with pytest.raises(KeyError):
            await manager.reconnect("nope")
    assert {s.state for s in manager.statuses().values()} == {"closed"}


async def test_reconnect_while_connecting_and_after_a_server_died(tmp_path: Path) -> None:
    gate, mute_gate, spawned = tmp_path / "gate", tmp_path / "mute_gate", tmp_path / "spawned"
    silent = f'exec "{sys.executable}" "{SERVERS / "silent.py"}"'
    hang = f'[ -e "{mute_gate}" ] || exit 1; touch "{spawned}"; {silent}'
    servers = {
        "hung": switched("hung", gate, "silent.py", "echo_server.py"),
        "other": echo("other"),
        "mute": McpServerConfig("mute", command="sh", args=("-c", hang)),
    }
    manager = McpManager(servers, call_timeout=20, connect_timeout=60)
    await manager.start(wait=False)
    try:
        assert manager.statuses()["hung"].state == "pending"
        waiting = asyncio.ensure_future(manager.wait_ready("hung"))
        gate.touch()
        # The pending connection is given up and a new one made; whoever waited for the
        # server gets the new connection's status, not the abandoned one's.
        status = await manager.reconnect("hung")
        assert status.state == "connected", status.message
        assert (await waiting).state == "connected"

        assert (await manager.wait_ready("other")).state == "connected"
        died = await manager.call_tool("other", "die", {})
        assert died.is_error and manager.statuses()["other"].state == "failed"
        status = await manager.reconnect("other")
        assert (status.state, status.message) == ("connected", "")
        assert (await manager.call_tool("other", "echo", {"text": "again"})).content == "again"

        # Given up while the new connection waits for its handshake: it is ended, not left
        # half-made, and says so.
        assert (await manager.wait_ready("mute")).state == "failed"
        mute_gate.touch()
        reconnecting = asyncio.ensure_future(manager.reconnect("mute"))
        await asyncio.to_thread(wait_for, spawned)  # the new connection's process is there
        reconnecting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reconnecting
        status = await manager.wait_ready("mute")
        assert (status.state, status.message) == ("failed", "the reconnection was interrupted")
    finally:
        await manager.close()
