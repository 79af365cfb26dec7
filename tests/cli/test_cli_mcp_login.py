"""`/mcp login NAME` in the REPL (a real pty): a session whose OAuth-protected server failed
at start (no tokens) logs in without leaving, and the server's tool is in the next request;
Ctrl-C while the browser is awaited cancels the login and leaves the session as it was.

The server is tests/mcp/servers/oauth_server.py (the `mcp` package's server-side auth); the
browser's part is httpx following the URL the REPL printed (mcp_support.follow)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pty_support import ReplChild, assert_back_in_time

from mcp_support import follow, free_port, served
from queryloop.testing import MessagesServer, text, turn

pytestmark = pytest.mark.slow

URL = r"(http://127\.0\.0\.1:\d+/authorize\S+)"


@pytest.fixture(scope="module")
def oauth_port() -> Iterator[int]:
    with served("oauth_server.py") as port:
        yield port


def config(tmp_path: Path, port: int, **entry: Any) -> Path:
    path = tmp_path / "mcp.json"
    server = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", **entry}
    path.write_text(json.dumps({"mcpServers": {"guarded": server}}))
    return path


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def repl_on(server: MessagesServer, tmp_path: Path, mcp_config: Path) -> ReplChild:
    repl = ReplChild(
        server.base_url, tmp_path, "dumb", "--mcp-config", str(mcp_config), columns=200
    )
    repl.started()
    repl.sendline("/mcp login guarded")
    repl.expect("Open this URL in a browser to log in to 'guarded'")
    repl.expect(URL)
    return repl


def test_slash_mcp_login_connects_the_server_for_the_next_request(
    oauth_port: int, tmp_path: Path
) -> None:
    with MessagesServer([turn(text("now with the secret"))]) as server:
        repl = repl_on(server, tmp_path, config(tmp_path, oauth_port))
        try:
            follow(repl.child.match.group(1))
            repl.expect("'guarded' connected: 1 tool joins from the next request")
            repl.expect_prompt()
            repl.sendline("what can you do now?")
            repl.expect("now with the secret")
            assert tool_names(server.requests[0])[-1] == "mcp__guarded__secret"
            assert repl.exit() == 0
        finally:
            repl.close()


def test_ctrl_c_while_waiting_for_the_browser_cancels_the_login(
    oauth_port: int, tmp_path: Path
) -> None:
    callback = free_port()
    mcp_config = config(tmp_path, oauth_port, oauth={"callbackPort": callback})
    with MessagesServer([turn(text("still here"))]) as server:
        repl = repl_on(server, tmp_path, mcp_config)
        try:
            pressed = repl.interrupt()
            seconds = repl.seconds_to_prompt(pressed, marker="Login to 'guarded' cancelled")
            assert_back_in_time(seconds, "waiting for the browser")
            with socket.socket() as s:  # the callback port was released
                s.bind(("127.0.0.1", callback))
            repl.sendline("/mcp")
            repl.expect(r"guarded\s+failed\s+needs login")
            repl.sendline("are you there?")
            repl.expect("still here")
            assert "mcp__guarded__secret" not in tool_names(server.requests[0])
            assert repl.exit() == 0
        finally:
            repl.close()
    assert not (tmp_path / "home" / "mcp-auth").exists() or not any(
        (tmp_path / "home" / "mcp-auth").glob("*.json")
    )
