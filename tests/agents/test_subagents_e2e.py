"""Subagents end to end: the real loop, real tools and the official SDK against the local
Messages API server, with a model scripted per thread."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from subagent_support import by_thread, make_agent, result_text, system_text, tool_results

from queryloop.loop import MessageEvent, Terminal
from queryloop.messages import ProgressMessage
from queryloop.session import load_transcript
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn


def agent_call(marker: str, **extra: Any) -> Any:
    return tool_use("Agent", {"description": f"do {marker}", "prompt": f"{marker}: work", **extra})


async def test_two_subagents_in_one_message_run_in_parallel_and_answer_the_parent(
    tmp_path: Path, home: Path
) -> None:
    both_running = threading.Barrier(2, timeout=10)

    def parent(body: dict[str, Any]) -> Turn:
        results = tool_results(body)
        if not results:
            return turn(agent_call("CHILD-A"), agent_call("CHILD-B"))
        return turn(text("Both: " + " | ".join(result_text(r).split("\n")[0] for r in results)))

    def child(name: str) -> Any:
        def answer(body: dict[str, Any]) -> Turn:
            both_running.wait()  # passes only while the other subagent's request is in flight too
            assert "general-purpose" not in system_text(body)  # the agent's own prompt
            return turn(text(f"{name} finished"))

        return answer

    script = by_thread(parent, {"CHILD-A": child("A"), "CHILD-B": child("B")})
    with MessagesServer(script) as server:
        agent = make_agent(server, tmp_path, home)
        events = [e async for e in agent.stream("delegate")]
        result_messages = agent.messages
        session_dir = agent._runtime.transcript.path.parent / agent.session_id  # type: ignore[union-attr]
        await agent.aclose()
    assert agent.last_terminal is not None and agent.last_terminal.reason is Terminal.COMPLETED
    final = tool_results(server.requests[-1])
    assert [result_text(r).split("\n")[0] for r in final] == ["A finished", "B finished"]
    assert all(not r.get("is_error") for r in final)
    # The parent never sees the subagents' transcripts: one request per child, none with the
    # child's messages in the parent's history.
    assert "CHILD-A: work" not in str(server.requests[-1]["messages"][-1])
    # Progress reaches the event stream (and the transcript), never the array or the API.
    progress = [
        e.message
        for e in events
        if isinstance(e, MessageEvent) and isinstance(e.message, ProgressMessage)
    ]
    assert not any(isinstance(m, ProgressMessage) for m in result_messages)
    assert {p.data["agent_type"] for p in progress} == {"general-purpose"}
    assert len({p.parent_tool_use_id for p in progress}) == 2
    assert [v for v in server.violations if v] == []
    sidechains = sorted((session_dir / "subagents").glob("agent-*.jsonl"))
    assert len(sidechains) == 2
    loaded = load_transcript(sidechains[0])
    assert loaded.metadata["sidechain"] is True
    assert loaded.metadata["parent_tool_use_id"] in {p.parent_tool_use_id for p in progress}
    assert any(m.type == "assistant" for m in loaded.messages)


async def test_subagent_usage_and_cost_roll_up_into_the_parent(tmp_path: Path, home: Path) -> None:
    def parent(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return turn(agent_call("CHILD-A"))
        return turn(text("done"))

    script = by_thread(parent, {"CHILD-A": lambda body: turn(text("child answer"))})
    with MessagesServer(script) as server:
        agent = make_agent(server, tmp_path, home)
        result = await agent.run("delegate")
        path = agent._runtime.transcript.path  # type: ignore[union-attr]
        await agent.aclose()
    assert len(server.requests) == 3
    assert result.turns == 2  # the parent's own responses; the child's are counted apart
    parent_only = result.usage.output_tokens
    child_request = next(r for r in server.requests if "CHILD-A: work" in str(r["messages"][:2]))
    assert child_request is not None
    loaded = load_transcript(path)
    assert loaded.responses == 2
    assert loaded.cost_usd == pytest.approx(result.cost_usd)
    assert result.cost_usd > 0 and parent_only > 0
    # Three responses' worth of output tokens: two of the parent, one of the child.
    sidechain = next((path.parent / agent.session_id / "subagents").glob("*.jsonl"))
    child = load_transcript(sidechain)
    assert child.responses == 1
    assert loaded.usage.output_tokens == result.usage.output_tokens
    assert child.usage.output_tokens < result.usage.output_tokens


async def test_a_deny_rule_and_hooks_fire_for_a_subagents_tool_calls(
    tmp_path: Path, home: Path
) -> None:
    seen: list[tuple[str, str, str | None]] = []

    def pre(event: dict[str, Any]) -> dict[str, Any] | None:
        seen.append(
            (event["hook_event_name"], event["tool_name"], event["tool_input"].get("command"))
        )
        return None

    def post(event: dict[str, Any]) -> None:
        seen.append(
            (event["hook_event_name"], event["tool_name"], event["tool_input"].get("command"))
        )

    lifecycle: list[tuple[str, str]] = []

    def start(event: dict[str, Any]) -> dict[str, Any]:
        lifecycle.append((event["hook_event_name"], event["agent_type"]))
        return {"hookSpecificOutput": {"additionalContext": "START-CONTEXT from the hook"}}

    read: list[dict[str, Any]] = []

    def stop(event: dict[str, Any]) -> None:
        lifecycle.append((event["hook_event_name"], event["agent_type"]))
        assert event["last_assistant_message"] == "child saw both results"
        # The subagent's transcript as Claude Code writes it: the last assistant line.
        lines = Path(event["agent_transcript_path"]).read_text().splitlines()
        read.append({**json.loads([x for x in lines if '"role":"assistant"' in x][-1]),
                     "event": event})  # fmt: skip

    def parent(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return turn(agent_call("CHILD-A"))
        return turn(text("parent done"))

    def child(body: dict[str, Any]) -> Turn:
        done = len(tool_results(body))
        if done == 0:
            assert "START-CONTEXT from the hook" in str(body["messages"])
            return turn(tool_use("Bash", {"command": "rm -rf build"}))
        if done == 1:
            return turn(tool_use("Bash", {"command": "echo allowed"}))
        return turn(text("child saw both results"))

    with MessagesServer(by_thread(parent, {"CHILD-A": child})) as server:
        agent = make_agent(
            server,
            tmp_path,
            home,
            permission_mode="bypassPermissions",
            disallowed_tools=["Bash(rm:*)"],
            hooks={
                "PreToolUse": [pre],
                "PostToolUse": [post],
                "SubagentStart": [start],
                "SubagentStop": [stop],
            },
        )
        result = await agent.run("delegate")
        await agent.aclose()
    assert result.text == "parent done"
    child_final = next(
        r
        for r in server.requests
        if "CHILD-A: work" in str(r["messages"][0]) and len(tool_results(r)) == 2
    )
    denied, allowed = tool_results(child_final)
    assert denied["is_error"] and "denied by the rule Bash(rm:*)" in result_text(denied)
    assert "allowed" in result_text(allowed) and not allowed.get("is_error")
    # PreToolUse fired for both of the subagent's calls (the deny rule is checked after it),
    # PostToolUse for the one that ran; the parent's Agent call fired them too.
    assert ("PreToolUse", "Bash", "rm -rf build") in seen
    assert ("PreToolUse", "Bash", "echo allowed") in seen
    assert ("PostToolUse", "Bash", "echo allowed") in seen
    assert ("PostToolUse", "Bash", "rm -rf build") not in seen
    assert ("PreToolUse", "Agent", None) in seen
    [last] = read
    assert last["message"]["content"] == [{"type": "text", "text": "child saw both results"}]
    assert last["isSidechain"] is True and last["agentId"] == last["event"]["agent_id"]
    assert Path(last["event"]["agent_transcript_path"]).parent.name == "subagents"
    assert lifecycle == [("SubagentStart", "general-purpose"), ("SubagentStop", "general-purpose")]


async def test_a_failing_subagent_reports_its_error_to_the_parent(
    tmp_path: Path, home: Path
) -> None:
    def parent(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return turn(agent_call("CHILD-A"), agent_call("CHILD-B"))
        return turn(text("reported"))

    calls = {"A": 0}

    def failing(body: dict[str, Any]) -> Turn:
        calls["A"] += 1
        raise RuntimeError("the model crashed")  # the server answers 500 for this request

    with MessagesServer(
        by_thread(parent, {"CHILD-A": failing, "CHILD-B": lambda b: turn(text("B fine"))})
    ) as server:
        agent = make_agent(server, tmp_path, home)
        result = await agent.run("delegate")
        await agent.aclose()
    assert result.terminal is Terminal.COMPLETED and result.text == "reported"
    failed, fine = tool_results(server.requests[-1])
    assert failed["is_error"] is True
    assert "did not finish" in result_text(failed) and "model_error" in result_text(failed)
    assert not fine.get("is_error") and result_text(fine).startswith("B fine")


async def test_a_subagent_at_its_turn_limit_says_so(tmp_path: Path, home: Path) -> None:
    from queryloop.agents import AgentDefinition

    looper = AgentDefinition(
        name="looper", description="Keeps listing files.", prompt="List forever.", max_turns=2
    )

    def parent(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return turn(agent_call("CHILD-A", subagent_type="looper"))
        return turn(text("ok"))

    def child(body: dict[str, Any]) -> Turn:
        assert "List forever." in system_text(body)
        return turn(text("still going"), tool_use("LS", {"path": "."}))

    with MessagesServer(by_thread(parent, {"CHILD-A": child})) as server:
        agent = make_agent(server, tmp_path, home, agents=[looper])
        await agent.run("delegate")
        await agent.aclose()
    (block,) = tool_results(server.requests[-1])
    assert block["is_error"] is True
    assert "turn limit (2 turns)" in result_text(block)
    assert "still going" in result_text(block)
    child_requests = [r for r in server.requests if "CHILD-A: work" in str(r["messages"][0])]
    assert len(child_requests) == 2


async def test_a_subagents_question_says_which_subagent_asks(tmp_path: Path, home: Path) -> None:
    asked: list[tuple[str, str | None]] = []

    async def can_use_tool(tool: str, input: Any, request: Any) -> bool:
        asked.append((str(input.get("command")), request.agent_id))
        return False

    def parent(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return turn(agent_call("CHILD-A"), tool_use("Bash", {"command": "touch parent.txt"}))
        return turn(text("done"))

    def child(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return turn(tool_use("Bash", {"command": "touch child.txt"}))
        return turn(text("child done"))

    with MessagesServer(by_thread(parent, {"CHILD-A": child})) as server:
        agent = make_agent(server, tmp_path, home, can_use_tool=can_use_tool)
        events = [e async for e in agent.stream("delegate")]
        await agent.aclose()
    progress = [
        e.message.data
        for e in events
        if isinstance(e, MessageEvent) and isinstance(e.message, ProgressMessage)
    ]
    assert progress[0]["kind"] == "started" and progress[0]["description"] == "do CHILD-A"
    assert sorted(asked, key=str) == sorted(
        [("touch parent.txt", None), ("touch child.txt", progress[0]["agent_id"])], key=str
    )
