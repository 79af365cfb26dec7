"""MCP servers start on a loop of their own (`tools.mcp_launch`): the caller's thread may be
busy with synchronous work (importing the model SDK, running git) the whole time."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import mcp.client.stdio as sdk_stdio

from queryloop.tools.mcp import STDIO_EXIT_GRACE, STDIO_KILL_GRACE, McpManager
from queryloop.tools.mcp_launch import launch_mcp
from queryloop.tools.mcp_server import McpServerConfig

SERVERS = Path(__file__).parent / "servers"


def raw(name: str) -> McpServerConfig:
    return McpServerConfig(
        name, command=sys.executable, args=(str(SERVERS / "raw_lookup_server.py"),)
    )


async def test_servers_connect_while_the_callers_loop_is_blocked(tmp_path: Path) -> None:
    launch = launch_mcp({"a": raw("a"), "b": raw("b")}, cwd=tmp_path)
    # Block this loop as a synchronous import would: the handshakes must still complete.
    deadline = time.monotonic() + 60
    while not launch.done() and time.monotonic() < deadline:
        time.sleep(0.05)  # noqa: ASYNC251 (blocking the loop is the point)
    assert launch.done(), "the servers did not connect while the caller's loop was blocked"
    manager = await launch.manager()
    try:
        assert {s.state for s in manager.statuses().values()} == {"connected"}
        assert [t.name for t in manager.tools()] == ["mcp__a__lookup", "mcp__b__lookup"]
        result = await manager.call_tool("a", "lookup", {"key": "k"})
        assert result.content == "value-k" and not result.is_error
    finally:
        await manager.close()
    assert {s.state for s in manager.statuses().values()} == {"closed"}


async def test_the_sdk_still_reads_the_shutdown_waits_we_set() -> None:
    """Starting servers sets module attributes of the SDK's stdio client; an SDK that
    renamed them would silently wait its own 2 s + 2 s again at every exit."""
    async with McpManager({}):
        pass
    assert sdk_stdio.PROCESS_TERMINATION_TIMEOUT == STDIO_EXIT_GRACE
    assert sdk_stdio.FORCE_KILL_TIMEOUT == STDIO_KILL_GRACE
    source = Path(sdk_stdio.__file__).read_text()
    assert "_wait_for_process_exit(process, PROCESS_TERMINATION_TIMEOUT)" in source
    assert "terminate_posix_process_tree(process, FORCE_KILL_TIMEOUT)" in source


def test_importing_queryloop_leaves_the_sdk_as_it_is() -> None:
    code = (
        "import queryloop.tools.mcp, mcp.client.stdio as s; "
        "print(s.PROCESS_TERMINATION_TIMEOUT, s.FORCE_KILL_TIMEOUT)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["2.0", "2.0"]
