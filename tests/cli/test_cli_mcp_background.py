"""MCP servers start behind the prompt (issue 34, item 7).

`-p` waits at most `MCP_TIMEOUT` for its servers, all at once, and names those it gave up
on; the REPL's prompt never waits for them: a prompt is answered without a server still
connecting, and that server's tools join, announced, once it is ready.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from cli_helpers import COMMAND, cli_env, project
from pty_support import ReplChild

from queryloop.testing import MessagesServer, text, turn

SERVERS = Path(__file__).parents[1] / "mcp" / "servers"
SILENT = SERVERS / "silent.py"
"""Starts and never answers `initialize` (an `npx -y ...` offline)."""
RAW_SERVER = SERVERS / "raw_lookup_server.py"


def silent(name: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SILENT)], "env": {"SILENT_NAME": name}}


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in body.get("tools", [])]


def test_print_mode_gives_up_on_servers_after_mcp_timeout_and_names_them(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {n: silent(n) for n in ("aa", "bb", "cc")}}))
    with MessagesServer([turn(text("answered anyway"))]) as server:
        done = subprocess.run(
            [*COMMAND, "-p", "hello", "--mcp-config", str(config)],
            cwd=project(tmp_path),
            env=cli_env(server.base_url, tmp_path, MCP_TIMEOUT="1500"),
            capture_output=True,
            text=True,
            timeout=25,  # Claude Code's default MCP_TIMEOUT (30 s) would not fit
        )
        assert done.returncode == 0, done.stderr
        assert "answered anyway" in done.stdout
        assert len(server.requests) == 1
        assert not [n for n in tool_names(server.requests[0]) if n.startswith("mcp__")]
    for name in ("aa", "bb", "cc"):
        assert f"MCP server '{name}' did not connect within 1.5 s (MCP_TIMEOUT)" in done.stderr
    assert done.stderr.count("MCP server") == 3, done.stderr  # once each


def test_the_repl_prompt_does_not_wait_for_mcp_servers_and_late_tools_join(
    tmp_path: Path,
) -> None:
    """A server that never answers and one that answers only once the test opens its gate:
    the prompt takes a line and it is answered without their tools; the gated server's
    tools then join, announced, and the next request carries them."""
    gate = tmp_path / "gate"
    gated = {
        "command": "sh",
        "args": [
            "-c",
            f'while [ ! -e "{gate}" ]; do sleep 0.05; done; exec "{sys.executable}" "{RAW_SERVER}"',
        ],
    }
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"hung": silent("hung"), "lookup": gated}}))
    turns = [turn(text("first answer")), turn(text("second answer"))]
    with MessagesServer(turns) as server:
        repl = ReplChild(
            server.base_url, tmp_path, "xterm-256color", "--mcp-config", str(config),
            MCP_TIMEOUT="120000",
        )  # fmt: skip
        try:
            repl.started()
            repl.sendline("first question")
            repl.expect("first answer", timeout=20)  # no server has connected (30 s on main)
            repl.expect_prompt()
            assert not [n for n in tool_names(server.requests[0]) if n.startswith("mcp__")]
            gate.touch()
            repl.expect("MCP server 'lookup' connected: its 1 tool joins", timeout=30)
            repl.sendline("second question")
            repl.expect("second answer", timeout=30)
            assert "mcp__lookup__lookup" in tool_names(server.requests[1])
            # the earlier tools keep their places: the late one is appended
            before = tool_names(server.requests[0])
            assert tool_names(server.requests[1])[: len(before)] == before
            assert repl.exit() == 0
        finally:
            repl.close()
