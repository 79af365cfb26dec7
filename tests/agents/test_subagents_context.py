"""What a subagent's context holds (attachment phases, the agent listing delta), how deep
subagents nest, aborts reaching children, and background subagents."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from subagent_support import by_thread, make_agent, result_text, tool_results

from queryloop.loop import Terminal
from queryloop.messages import (
    AssistantMessage,
    AttachmentMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools", [])]


def write_agent(home: Path, name: str) -> Path:
    folder = home / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\nname: {name}\ndescription: The {name} agent.\n---\nYou are {name}.\n")
    return path


async def test_phase_one_and_three_are_main_thread_only_phase_two_reaches_the_subagent(
    tmp_path: Path, home: Path
) -> None:
    (tmp_path / "notes.txt").write_text("MENTIONED-FILE-CONTENT\n")
    captured: dict[str, Any] = {}

    def parent(body: dict[str, Any]) -> Turn:
        if '"name": "Agent"' not in json.dumps(body["messages"]):  # (@notes.txt: a Read pair)
            captured["parent"] = json.dumps(body["messages"])
            prompt = "CHILD-A: read @notes.txt"
            return turn(tool_use("Agent", {"description": "read", "prompt": prompt}))
        captured["parent_after"] = json.dumps(body["messages"])
        return turn(text("done"))

    def child(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            captured["child_tools"] = tool_names(body)
            return turn(tool_use("LS", {"path": "."}))
        captured["child"] = json.dumps(body["messages"])
        return turn(text("child done"))

    with MessagesServer(by_thread(parent, {"CHILD-A": child})) as server:
        # A low threshold makes phase three's context-usage warning fire after every turn.
        agent = make_agent(server, tmp_path, home, autocompact_threshold=20_500)
        await agent.run("look at @notes.txt")
        await agent.aclose()
    assert "MENTIONED-FILE-CONTENT" in captured["parent"]  # phase 1 on the main thread
    assert "Context usage:" in captured["parent_after"]  # phase 3 on the main thread
    assert "MENTIONED-FILE-CONTENT" not in captured["child"]  # no phase 1 in a subagent
    assert "Context usage:" not in captured["child"]  # no phase 3 either, after its turn
    assert "Available agent types" in captured["parent"]
    # Depth 1 of 2: the subagent may nest, so it has the Agent tool and the listing.
    assert "Agent" in captured["child_tools"] and "Available agent types" in captured["child"]


async def test_agent_listing_delta_announces_added_and_removed_agents(
    tmp_path: Path, home: Path
) -> None:
    late = write_agent(home, "tester")
    script = [turn(text("one")), turn(text("two")), turn(text("three"))]
    with MessagesServer(script) as server:
        agent = make_agent(server, tmp_path, home)
        await agent.run("first")
        write_agent(home, "linter")
        await agent.run("second")
        late.unlink()
        await agent.run("third")
        messages = agent.messages
        await agent.aclose()
    deltas = [
        m.attachment.data
        for m in messages
        if isinstance(m, AttachmentMessage) and m.attachment.type == "agent_listing_delta"
    ]
    assert [d["added_types"] for d in deltas] == [["general-purpose", "tester"], ["linter"], []]
    assert [d["removed_types"] for d in deltas] == [[], [], ["tester"]]
    assert [d["is_initial"] for d in deltas] == [True, False, False]
    second = json.dumps(server.requests[1]["messages"][-1])
    assert "New agent types available" in second and "The linter agent." in second
    assert "no longer available" in json.dumps(server.requests[2]["messages"][-1])
    # The tools array (and the Agent tool's description) never changed: the cache holds.
    assert server.requests[0]["tools"] == server.requests[2]["tools"]


async def test_nesting_stops_at_the_depth_limit(tmp_path: Path, home: Path) -> None:
    tools_by_depth: dict[int, list[str]] = {}

    def parent(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return turn(tool_use("Agent", {"description": "d1", "prompt": "DEPTH-1: go"}))
        return turn(text("top done"))

    def depth1(body: dict[str, Any]) -> Turn:
        tools_by_depth[1] = tool_names(body)
        if not tool_results(body):
            return turn(tool_use("Agent", {"description": "d2", "prompt": "DEPTH-2: go"}))
        return turn(text("depth 1 done: " + result_text(tool_results(body)[0]).split("\n")[0]))

    def depth2(body: dict[str, Any]) -> Turn:
        tools_by_depth[2] = tool_names(body)
        return turn(text("depth 2 answer"))

    routes = {"DEPTH-2": depth2, "DEPTH-1": depth1}
    with MessagesServer(by_thread(parent, routes)) as server:
        agent = make_agent(server, tmp_path, home)
        result = await agent.run("nest")
        await agent.aclose()
    assert result.text == "top done"
    assert "Agent" in tools_by_depth[1] and "Agent" not in tools_by_depth[2]
    assert "depth 1 done: depth 2 answer" in result_text(tool_results(server.requests[-1])[0])

    with MessagesServer(by_thread(parent, routes)) as server:
        agent = make_agent(server, tmp_path, home, max_subagent_depth=1)
        await agent.run("nest")
        await agent.aclose()
    assert "Agent" not in tools_by_depth[1]


async def test_aborting_the_parent_aborts_its_subagents(tmp_path: Path, home: Path) -> None:
    child_waiting = threading.Event()
    release = threading.Event()

    def parent(body: dict[str, Any]) -> Turn:
        return turn(
            tool_use("Agent", {"description": "a", "prompt": "CHILD-A: slow"}),
            tool_use("Agent", {"description": "b", "prompt": "CHILD-B: slow"}),
        )

    def slow(body: dict[str, Any]) -> Turn:
        child_waiting.set()
        release.wait(20)
        return turn(text("late"))

    with MessagesServer(by_thread(parent, {"CHILD-A": slow, "CHILD-B": slow})) as server:
        agent = make_agent(server, tmp_path, home)
        task = asyncio.ensure_future(agent.run("fan out"))
        assert await asyncio.to_thread(child_waiting.wait, 20)
        agent.abort()
        result = await asyncio.wait_for(task, 10)
        release.set()
        messages = agent.messages
        await agent.aclose()
    # The first child may start while the parent's response is still streaming.
    assert result.terminal in (Terminal.ABORTED_TOOLS, Terminal.ABORTED_STREAMING)
    answered = [
        b
        for m in messages
        if isinstance(m, UserMessage) and not isinstance(m.content, str)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]
    calls = [
        b.id
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolUseBlock)
    ]
    # Every call in the array is answered, and every started subagent was interrupted. (A call
    # whose block completed just before the abort may be answered without being in the cut-off
    # assistant message; normalization drops such a result. That is the loop's, not ours.)
    assert set(calls) <= {b.tool_use_id for b in answered}
    assert answered and all(b.is_error for b in answered)


async def test_a_background_subagent_reports_when_done(tmp_path: Path, home: Path) -> None:
    may_finish = threading.Event()

    def parent(body: dict[str, Any]) -> Turn:
        done = len(tool_results(body))
        if done == 0:
            call = {"description": "research", "prompt": "CHILD-A: dig", "run_in_background": True}
            return turn(tool_use("Agent", call))
        if done == 1:
            assert "Async agent launched" in result_text(tool_results(body)[0])
            may_finish.set()
            return turn(tool_use("Bash", {"command": "sleep 1; echo meanwhile"}))
        return turn(text("got the report"))

    def child(body: dict[str, Any]) -> Turn:
        may_finish.wait(20)
        return turn(text("BACKGROUND-REPORT: found it"))

    with MessagesServer(by_thread(parent, {"CHILD-A": child})) as server:
        agent = make_agent(server, tmp_path, home, permission_mode="bypassPermissions")
        result = await agent.run("research in the background")
        await agent.aclose()
    assert result.text == "got the report"
    last = json.dumps(server.requests[-1]["messages"][-1])
    assert "<task-notification>" in last and "BACKGROUND-REPORT: found it" in last
    assert result.cost_usd > 0
