"""A tool never starts before its call is durable (issue 25, item 15).

The streaming executor starts a tool as soon as its tool_use block is complete, while the model
is still streaming the rest of the response. A SIGKILL in that window must not leave a
`tool_start` record for a call that no message record holds: resume would then find nothing
to repair and a call with side effects would vanish from the conversation.

Deterministic: a scripted model makes one call to a slow MCP tool while the server streams
slowly (`event_delay=0.15`, so message_delta and message_stop come well after the tool_use
block), and the CLI is SIGKILLed the moment the MCP server starts the call.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import COMMAND, cli_env

from queryloop.messages.blocks import ToolUseBlock
from queryloop.messages.types import AssistantMessage
from queryloop.session import latest_session, load_transcript
from queryloop.testing import MessagesServer, text, tool_use, turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SERVER = Path(__file__).parents[1] / "mcp" / "servers" / "raw_lookup_server.py"
LOOKUP = "mcp__lookup__lookup"


def _records(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_bytes().split(b"\n"):
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


def tool_starts_without_a_prior_call(records: list[dict[str, Any]]) -> list[str]:
    """The invariant: every `tool_start` id is in a message record written before it."""
    seen: set[str] = set()
    missing: list[str] = []
    for record in records:
        if record.get("record") == "message":
            content = record["message"].get("content")
            if isinstance(content, list):
                seen.update(b["id"] for b in content if b.get("type") == "tool_use")
        elif record.get("record") == "timing" and record.get("event") == "tool_start":
            if record["tool_use_id"] not in seen:
                missing.append(record["tool_use_id"])
    return missing


def _wait_for(proc: subprocess.Popen[str], ready: Any, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if ready():
            return True
        time.sleep(0.002)
    return False


def test_sigkill_as_the_tool_starts_leaves_its_call_in_the_transcript(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    markers = tmp_path / "markers"
    markers.mkdir()
    config = tmp_path / "mcp.json"
    entry = {
        "command": sys.executable,
        "args": [str(SERVER)],
        "env": {"LOOKUP_MARKERS": str(markers)},
    }
    config.write_text(json.dumps({"mcpServers": {"lookup": entry}}))
    call = tool_use(LOOKUP, {"key": "k1", "delay": 5}, id="toolu_slow")
    script = [turn(text("Looking it up."), call), turn(text("Done."))]
    args = ["--mcp-config", str(config), "--permission-mode", "bypassPermissions"]
    with MessagesServer(script, event_delay=0.15) as server:
        env = cli_env(server.base_url, tmp_path)
        proc = subprocess.Popen(
            [*COMMAND, "-p", "look up k1", *args, "--model", "claude-sonnet-4-6"],
            cwd=project,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        started = _wait_for(proc, lambda: any(markers.glob("k1.start.*")))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        stderr = proc.stderr.read() if proc.stderr else ""
        assert started, stderr
        path = latest_session(project, tmp_path / "home")
        assert path is not None
        records = _records(path)
        starts = [r for r in records if r.get("event") == "tool_start"]
        assert [r["tool_use_id"] for r in starts] == ["toolu_slow"]
        assert tool_starts_without_a_prior_call(records) == []
        # Loading finds the call and answers it, so resume tells the model what happened.
        loaded = load_transcript(path)
        uses = [
            b.id
            for m in loaded.messages
            if isinstance(m, AssistantMessage)
            for b in m.content
            if isinstance(b, ToolUseBlock)
        ]
        assert uses == ["toolu_slow"]
        assert len(loaded.repaired) == 1
