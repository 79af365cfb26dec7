"""kill -9 loses no work: a 30-step session SIGKILLed at 20 points, resumed with --continue.

The real `queryloop -p` command (a subprocess), a real stdio MCP server whose `lookup` tool is
readOnlyHint and a little slow (raw_lookup_server.py: no SDK, so it starts at once), and the
local Messages API server with slow streaming. The model is a function of the request: it asks
for the first of 30 keys whose real value it has not seen yet, so work lost to a kill would
show up as a key asked for again or never answered. Kills land while the response streams,
while the tool runs and between a tool's end and the next request. After each,
`queryloop -p ... --continue` resumes the session.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import COMMAND, cli_env

from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

SERVER = Path(__file__).parents[1] / "mcp" / "servers" / "raw_lookup_server.py"
STEPS = 30
KILLS = 20
LOOKUP = "mcp__lookup__lookup"
VALUE = re.compile(r"^value-k(\d+)$")


def _seen_values(body: dict[str, Any]) -> set[int]:
    seen: set[int] = set()
    for message in body["messages"]:
        if message["role"] != "user" or isinstance(message["content"], str):
            continue
        for block in message["content"]:
            if block.get("type") != "tool_result":
                continue
            content = block["content"]
            value = (
                content
                if isinstance(content, str)
                else "".join(part.get("text", "") for part in content)
            )
            match = VALUE.match(value)
            if match:
                seen.add(int(match.group(1)))
    return seen


def model(body: dict[str, Any]) -> Turn:
    """Ask for the first key whose value has not come back; finish once all have."""
    missing = [n for n in range(STEPS) if n not in _seen_values(body)]
    if not missing:
        return turn(text(f"All {STEPS} values read."))
    step = missing[0]
    return turn(text(f"Reading key {step}."), tool_use(LOOKUP, {"key": f"k{step}", "delay": 0.25}))


def _markers(folder: Path, stage: str, pid: int) -> list[Path]:
    """Marker files the current run's MCP server wrote (its parent is the CLI process)."""
    return [p for p in folder.glob(f"*.{stage}.*") if p.read_text() == str(pid)]


def _wait(proc: subprocess.Popen[str], ready: Any, timeout: float = 120.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        if ready():
            return True
        time.sleep(0.005)
    return False


MOMENTS = ("streaming", "tool running", "between requests")


def _wait_for_moment(
    proc: subprocess.Popen[str], moment: str, server: MessagesServer, markers: Path, index: int
) -> bool:
    """Block until the run reaches `moment`; False if it exited first."""
    if moment == "streaming":
        requests_before = len(server.requests)
        hit = _wait(proc, lambda: len(server.requests) > requests_before)
        time.sleep(0.03 + 0.04 * (index % 4))  # a response streams for ~0.3 s
        return hit
    stage = "start" if moment == "tool running" else "end"
    return _wait(proc, lambda: bool(_markers(markers, stage, proc.pid)))


def _stderr(proc: subprocess.Popen[str]) -> str:
    return proc.stderr.read() if proc.stderr else ""


def test_sigkill_at_20_points_then_continue_finishes_with_every_result(tmp_path: Path) -> None:
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
    args = ["--mcp-config", str(config), "--permission-mode", "bypassPermissions"]
    args += ["--model", "claude-sonnet-4-6"]
    kills: list[str] = []
    with MessagesServer(model, event_delay=0.02) as server:
        env = cli_env(server.base_url, tmp_path)
        for index in range(KILLS):
            resume = ["--continue"] if index else []
            proc = subprocess.Popen(
                [*COMMAND, "-p", "read all the keys", *resume, *args],
                cwd=project,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            moment = MOMENTS[index % len(MOMENTS)]
            hit = _wait_for_moment(proc, moment, server, markers, index)
            assert hit, f"run {index} ended before the kill ({moment}): {_stderr(proc)}"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            if proc.stderr:
                proc.stderr.close()
            kills.append(moment)
        final = subprocess.run(
            [*COMMAND, "-p", "read all the keys", "--continue", *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        bodies = [json.loads(json.dumps(b)) for b in server.requests]
        violations = [v for v in server.violations if v]
    assert final.returncode == 0, final.stderr
    assert f"All {STEPS} values read." in final.stdout
    assert len(kills) == KILLS
    assert violations == []  # every request was valid
    # Every tool call the model made has its real result in a later request.
    for i, body in enumerate(bodies):
        for message in body["messages"]:
            if message["role"] != "assistant" or isinstance(message["content"], str):
                continue
            for block in message["content"]:
                if block.get("type") != "tool_use":
                    continue
                key = int(block["input"]["key"][1:])
                assert any(
                    key in _seen_values(later) and _has_result(later, block["id"])
                    for later in bodies[i:]
                ), f"call {block['id']} for k{key} never got its real result"
    assert _seen_values(bodies[-1]) == set(range(STEPS))


def _has_result(body: dict[str, Any], tool_use_id: str) -> bool:
    for message in body["messages"]:
        if message["role"] == "user" and not isinstance(message["content"], str):
            for block in message["content"]:
                if block.get("type") == "tool_result" and block["tool_use_id"] == tool_use_id:
                    content = block["content"]
                    value = (
                        content
                        if isinstance(content, str)
                        else "".join(part.get("text", "") for part in content)
                    )
                    return bool(VALUE.match(value))
    return False
