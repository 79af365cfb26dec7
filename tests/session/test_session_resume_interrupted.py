"""Interrupted calls are redone before the next request: resume, continue_latest, abort.

Real parts: the Agent, a real stdio MCP server (tests/mcp/servers/lookup_server.py, whose
`lookup` is readOnlyHint, `put` idempotentHint and `append` neither), real transcripts on disk
and the official SDK against the local Messages API server.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from queryloop import Agent
from queryloop.loop import Terminal
from queryloop.loop.resume import MAY_HAVE_RUN
from queryloop.messages import (
    Message,
    UserMessage,
    assistant_message,
    normalize_messages_for_api,
    user_message,
    validate_api_request,
)
from queryloop.messages.blocks import TextBlock, ToolResultBlock, ToolUseBlock
from queryloop.providers.retry import RetryPolicy
from queryloop.session import Transcript, load_transcript, session_path
from queryloop.testing import MessagesServer, text, tool_use, turn

SERVERS = Path(__file__).parents[1] / "mcp" / "servers"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("QUERYLOOP_HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("the real notes\n")
    return folder


def _options(
    server: MessagesServer, tmp_path: Path, home: Path, project: Path, markers: Path | None = None
) -> dict[str, Any]:
    config = tmp_path / "lookup.mcp.json"
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(SERVERS / "lookup_server.py")]}
    if markers is not None:
        entry["env"] = {"LOOKUP_MARKERS": str(markers)}
    config.write_text(json.dumps({"mcpServers": {"lookup": entry}}))
    return {
        "base_url": server.base_url,
        "retry": RetryPolicy(max_retries=1, base_delay=0.01),
        "cwd": project,
        "home": home,
        "mcp_config": config,
        "permission_mode": "bypassPermissions",
    }


def _killed_session(project: Path, home: Path, calls: list[ToolUseBlock]) -> Path:
    """A transcript as kill -9 leaves it: the response's tool_uses written, no results."""
    path = session_path("killed-session", project, home)
    with Transcript(path, "killed-session") as writer:
        writer.append(user_message("look things up"))
        writer.append(assistant_message([TextBlock("Looking."), *calls]))
    return path


def _results(body: dict[str, Any]) -> dict[str, Any]:
    return {
        block["tool_use_id"]: block
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    }


def _text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def _await_file(folder: Path, pattern: str) -> None:
    deadline = time.monotonic() + 60
    while not list(folder.glob(pattern)):
        assert time.monotonic() < deadline, f"no {pattern} in {folder}"
        time.sleep(0.01)


CALLS = [
    ToolUseBlock("toolu_read", "Read", {"file_path": "notes.txt"}),
    ToolUseBlock("toolu_lookup", "mcp__lookup__lookup", {"key": "k1"}),
    ToolUseBlock("toolu_put", "mcp__lookup__put", {"key": "k2", "value": "v"}),
    ToolUseBlock("toolu_append", "mcp__lookup__append", {"key": "k3", "value": "v"}),
    ToolUseBlock("toolu_bash", "Bash", {"command": "echo side effect >> log.txt"}),
]


async def test_resume_reruns_read_only_and_idempotent_calls(
    tmp_path: Path, home: Path, project: Path
) -> None:
    path = _killed_session(project, home, CALLS)
    with MessagesServer([turn(text("Carrying on."))]) as server:
        agent = Agent.resume(path, "claude-sonnet-4-6", **_options(server, tmp_path, home, project))
        result = await agent.run("go on")
        await agent.aclose()
        body = server.requests[0]
        violations = [v for v in server.violations if v]
    assert result.text == "Carrying on." and violations == []
    results = _results(body)
    assert "the real notes" in _text(results["toolu_read"])
    assert _text(results["toolu_lookup"]) == "value-k1"
    assert _text(results["toolu_put"]) == "stored k2"
    for not_safe in ("toolu_append", "toolu_bash"):
        assert _text(results[not_safe]) == MAY_HAVE_RUN and results[not_safe]["is_error"]
    assert not (project / "log.txt").exists()  # a side effect is never repeated
    # The transcript now holds the real results: loading it again redoes nothing.
    reloaded = load_transcript(path)
    answered = {
        b.tool_use_id: b
        for m in reloaded.messages
        if isinstance(m, UserMessage) and not isinstance(m.content, str)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }
    assert answered["toolu_lookup"].content == "value-k1"
    assert answered["toolu_append"].content == MAY_HAVE_RUN
    assert reloaded.repaired == ()


async def test_continue_latest_reruns_too(tmp_path: Path, home: Path, project: Path) -> None:
    _killed_session(project, home, CALLS[1:2])
    with MessagesServer([turn(text("ok"))]) as server:
        agent = Agent.continue_latest(
            "claude-sonnet-4-6", **_options(server, tmp_path, home, project)
        )
        await agent.run("go on")
        await agent.aclose()
        results = _results(server.requests[0])
    assert _text(results["toolu_lookup"]) == "value-k1"


async def test_abort_then_a_new_prompt_reruns_the_interrupted_read(
    tmp_path: Path, home: Path, project: Path
) -> None:
    markers = tmp_path / "markers"
    markers.mkdir()
    slow = tool_use("mcp__lookup__lookup", {"key": "slow", "delay": 1.0}, id="toolu_slow")
    with MessagesServer([turn(slow), turn(text("Got it."))]) as server:
        agent = Agent("claude-sonnet-4-6", **_options(server, tmp_path, home, project, markers))
        first = asyncio.ensure_future(agent.run("look up slow"))
        await asyncio.to_thread(_await_file, markers, "slow.start.*")
        agent.abort()
        # The tool may start while the response still streams (streaming tool execution).
        assert (await first).terminal in (Terminal.ABORTED_TOOLS, Terminal.ABORTED_STREAMING)
        second = await agent.run("and now?")
        await agent.aclose()
        results = _results(server.requests[-1])
        violations = [v for v in server.violations if v]
    assert second.text == "Got it." and violations == []
    assert _text(results["toolu_slow"]) == "value-slow"
    assert len(list(markers.glob("slow.end.*"))) == 1  # run again, to the end, once


async def test_only_the_last_response_is_redone(tmp_path: Path) -> None:
    """No MCP, no server: the function itself on an array an in-process abort left behind."""
    from queryloop.loop.resume import resume_interrupted_calls
    from queryloop.messages import Interruption, interrupted_result_message
    from queryloop.messages.interruption import INTERRUPTED_FOR_TOOL_USE
    from queryloop.tools import builtin_tools
    from queryloop.tools.base import ToolContext

    (tmp_path / "a.txt").write_text("alpha\n")
    old = ToolUseBlock("toolu_old", "Read", {"file_path": "a.txt"})
    read = ToolUseBlock("toolu_read", "Read", {"file_path": "a.txt"})
    bash = ToolUseBlock("toolu_bash", "Bash", {"command": "touch b.txt"})
    messages: list[Message] = [
        user_message("first"),
        assistant_message([old]),
        interrupted_result_message("toolu_old", Interruption.ABORTED),
        assistant_message([read, bash]),
        interrupted_result_message("toolu_read", Interruption.ABORTED),
        interrupted_result_message("toolu_bash", Interruption.ABORTED),
        user_message(INTERRUPTED_FOR_TOOL_USE),
    ]
    ctx = ToolContext(cwd=tmp_path)
    resumed = await resume_interrupted_calls(messages, builtin_tools(), ctx)
    # The user's abort was recorded as Bash's result: true, so it stays (issue 25, item 10).
    assert resumed.rerun == ("toolu_read",) and resumed.marked == ()
    by_id = {
        b.tool_use_id: b
        for m in resumed.messages
        if isinstance(m, UserMessage) and not isinstance(m.content, str)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }
    assert "alpha" in str(by_id["toolu_read"].content) and not by_id["toolu_read"].is_error
    assert by_id["toolu_bash"].content == Interruption.ABORTED.text()
    assert by_id["toolu_old"].content == Interruption.ABORTED.text()  # seen by the model already
    assert not (tmp_path / "b.txt").exists()
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema()}
        for t in builtin_tools()
    ]
    request = normalize_messages_for_api(list(resumed.messages), tools, thinking=None)
    body = {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": request, "tools": tools}
    assert [v for v in validate_api_request(body) if v.is_error] == []
    again = await resume_interrupted_calls(resumed.messages, builtin_tools(), ctx)
    assert not again.changed
