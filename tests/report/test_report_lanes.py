"""Subagents as nested lanes (sidechain transcripts beside the session's), and `/report` in
the REPL."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from report_session import RecordedSession
from rich.console import Console

from queryloop import Agent
from queryloop.cli.commands import parse_slash
from queryloop.report import read_timeline
from queryloop.report.figures import timeline_figure
from queryloop.report.model import EventKind
from queryloop.session import session_path
from queryloop.testing import MessagesServer, text, tool_use, turn

# The recorded session is made once per worker: one worker runs all the report tests.
pytestmark = pytest.mark.xdist_group("report")


def write_sidechain(folder: Path, agent_id: str, parent_tool_use_id: str, t0: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    records: list[dict[str, Any]] = [
        {
            "record": "meta",
            "session_id": agent_id,
            "sidechain": True,
            "agent_id": agent_id,
            "agent_type": "Explore",
            "parent_tool_use_id": parent_tool_use_id,
        },
        {"record": "timing", "event": "request_start", "t": t0, "request": "r1", "turn": 1},
        {"record": "timing", "event": "first_token", "t": t0 + 0.1, "request": "r1"},
        {
            "record": "timing",
            "event": "request_end",
            "t": t0 + 0.3,
            "request": "r1",
            "usage": {"input_tokens": 10, "output_tokens": 5},
            "cost_usd": 0.001,
        },
        {
            "record": "timing",
            "event": "tool_start",
            "t": t0 + 0.2,
            "tool_use_id": "s1",
            "name": "Grep",
        },
        {
            "record": "timing",
            "event": "tool_end",
            "t": t0 + 0.25,
            "tool_use_id": "s1",
            "name": "Grep",
        },
        {"record": "timing", "event": "terminal", "t": t0 + 0.35, "reason": "completed"},
    ]
    path = folder / f"agent-{agent_id}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_sidechains_become_nested_lanes(recorded_session: RecordedSession, tmp_path: Path) -> None:
    transcript = tmp_path / recorded_session.transcript.name
    shutil.copy(recorded_session.transcript, transcript)
    main = read_timeline(transcript).main
    parent = main.tools[0]
    sidechains = tmp_path / transcript.stem / "subagents"
    write_sidechain(sidechains, "a1b2c3d4e5", parent.tool_use_id, parent.start)
    timeline = read_timeline(transcript)
    assert [lane.id for lane in timeline.lanes] == ["main", "a1b2c3d4e5"]
    lane = timeline.lanes[1]
    assert lane.parent_tool_use_id == parent.tool_use_id
    assert lane.label.startswith("Explore")
    assert len(lane.requests) == 1 and lane.requests[0].end is not None
    assert [t.name for t in lane.tools] == ["Grep"]
    rows = timeline_figure(timeline)["layout"]["yaxis"]["categoryarray"]
    assert any(row.startswith("↳ Explore") and row.endswith("model") for row in rows)
    assert any(row.endswith("events") and "Explore" in row for row in rows)


def test_slash_report_writes_the_page(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("QUERYLOOP_HOME", str(tmp_path / "home"))
    command, _, _ = parse_slash("/report")
    assert command is not None and command.name == "report"
    out = io.StringIO()
    target = tmp_path / "from-repl.html"

    async def go() -> None:
        with MessagesServer([turn(text("hello"))]) as server:
            agent = Agent("claude-sonnet-5-5", base_url=server.base_url, cwd=tmp_path)
            try:
                await agent.run("hi")
                repl = SimpleNamespace(agent=agent, console=Console(file=out, width=200))
                assert await command.handler(repl, str(target))  # type: ignore[arg-type]
            finally:
                await agent.aclose()

    asyncio.run(go())
    assert f"report: {target}" in out.getvalue()
    assert target.stat().st_size > 1_000_000


def _results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        b
        for m in body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


def _subagent_model(body: dict[str, Any]) -> Any:
    """The parent delegates once; the subagent (its first message says CHILD) lists the
    folder and tries a Write that headless mode denies, then answers."""
    child = "CHILD" in json.dumps(body["messages"][0])
    done = bool(_results(body))
    if child and not done:
        return turn(
            tool_use("LS", {"path": "."}),
            tool_use("Write", {"file_path": "denied.txt", "content": "x"}),
        )
    if child:
        return turn(text("child done"))
    if not done:
        return turn(tool_use("Agent", {"description": "look", "prompt": "CHILD: look around"}))
    return turn(text("parent done"))


def test_a_real_subagents_requests_and_tool_calls_fill_its_lane(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Issue 25.8: a subagent's sidechain carries the timing records the main thread writes,
    so its lane shows its requests and its tool calls, the denied one as denied."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    home = tmp_path / "home"

    async def go() -> Path:
        with MessagesServer(_subagent_model) as server:
            agent = Agent("claude-sonnet-5-5", base_url=server.base_url, cwd=tmp_path, home=home)
            try:
                result = await agent.run("delegate")
                assert result.text == "parent done"
            finally:
                await agent.aclose()
        return session_path(agent.session_id, tmp_path, home)

    timeline = read_timeline(asyncio.run(go()))
    main, lane = timeline.lanes
    [agent_call] = main.tools
    assert lane.parent_tool_use_id == agent_call.tool_use_id
    assert lane.has_timing and len(lane.requests) == 2
    assert all(r.end is not None and r.usage.output_tokens > 0 for r in lane.requests)
    tools = {t.name: t for t in lane.tools}
    assert sorted(tools) == ["LS", "Write"]
    assert not tools["LS"].is_error and tools["Write"].denied
    assert all(t.end is not None and t.request == lane.requests[0].request for t in tools.values())
    # Inside the parent's Agent call, on the parent's axis.
    assert agent_call.start <= min(t.start for t in lane.tools)
    assert agent_call.end is not None and max(t.end or 0 for t in lane.tools) <= agent_call.end
    assert [e.label for e in lane.events if e.kind is EventKind.TERMINAL] == ["completed"]
    figure = timeline_figure(timeline)
    denied = [d for d in figure["data"] if d["name"] == "tool denied"]
    [row] = [row for d in denied for row in d["y"]]
    assert row.startswith(f"↳ {lane.label} · tools ")
