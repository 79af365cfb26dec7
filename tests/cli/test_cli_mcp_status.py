"""`/mcp` in the REPL (a real pty): the session's MCP servers, each with its status, and for
one that failed, why (for an OAuth server without tokens that names `queryloop mcp login`;
tests/mcp/test_mcp_oauth.py checks that message)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pexpect
import pytest
from cli_helpers import cli_env, project

from queryloop.testing import MessagesServer

SERVERS = Path(__file__).resolve().parents[1] / "mcp" / "servers"

pytestmark = pytest.mark.slow


def test_slash_mcp_lists_the_servers_with_their_status(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    servers = {
        "echo": {"command": sys.executable, "args": [str(SERVERS / "echo_server.py")]},
        "crash": {"command": sys.executable, "args": [str(SERVERS / "crash_on_start.py")]},
    }
    config.write_text(json.dumps({"mcpServers": servers}))
    with MessagesServer([]) as server:
        env = cli_env(server.base_url, tmp_path, TERM="dumb", COLUMNS="160")
        child = pexpect.spawn(
            sys.executable,
            ["-m", "queryloop.cli.main", "--mcp-config", str(config)],
            cwd=str(project(tmp_path)), env=env, encoding="utf-8", timeout=60,
            dimensions=(40, 160),
        )  # fmt: skip
        try:
            child.expect("/help for commands")
            child.expect("> ")
            # The prompt does not wait for the servers (docs/settings.md, "Servers that are
            # slow to start"): a server still connecting is listed as pending; ask again.
            for _ in range(120):
                child.sendline("/mcp")
                if child.expect([r"echo\s+6 tools", r"echo\s+pending"]) == 0:
                    break
                time.sleep(0.25)
            child.expect(r"crash\s+failed\s+failed to start: .*DATABASE_URL")
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
