"""Recovery paths of the loop over real HTTP, asserted through recorded transitions, with
every request the server received checked against the API's rules."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import local_agent

from queryloop import Agent
from queryloop.loop import Continue, MessageEvent, Terminal, TerminalEvent, TransitionEvent
from queryloop.messages import Message
from queryloop.testing import MessagesServer, cut_stream, text, tool_use, turn

pytestmark = pytest.mark.usefixtures("home")


def agent_for(server: MessagesServer, cwd: Path, **kw: Any) -> Agent:
    return local_agent(server, cwd, permission_mode="bypassPermissions", **kw)


async def run(agent: Agent, prompt: str) -> tuple[list[Continue], TerminalEvent]:
    transitions: list[Continue] = []
    terminal: TerminalEvent | None = None
    async for event in agent.stream(prompt):
        if isinstance(event, TransitionEvent):
            transitions.append(event.reason)
        elif isinstance(event, TerminalEvent):
            terminal = event
    assert terminal is not None
    return transitions, terminal


def assert_valid(server: MessagesServer) -> None:
    assert [v for v in server.violations if v] == []


async def test_max_tokens_escalates_to_the_models_maximum(tmp_path: Path) -> None:
    long_answer = "word " * 400
    with MessagesServer([turn(text(long_answer)), turn(text(long_answer))]) as server:
        agent = agent_for(server, tmp_path, max_tokens=64)
        transitions, terminal = await run(agent, "write a lot")
        await agent.aclose()
    assert transitions == [Continue.MAX_OUTPUT_TOKENS_ESCALATE]
    assert terminal.reason is Terminal.COMPLETED
    first, second = server.requests
    assert first["max_tokens"] == 64 and second["max_tokens"] > 64
    assert first["messages"] == second["messages"]
    assert_valid(server)


async def test_prompt_too_long_is_recovered_by_reactive_compact(tmp_path: Path) -> None:
    """The server's window is far smaller than the client believes: the first request is
    refused, the compaction request is too long as well and is shrunk, then the task goes on
    with the fact from the first message kept."""

    def model(body: dict[str, Any]) -> Any:
        last = json.dumps(body["messages"][-1])
        if "summary" in last.lower():
            return turn(text("Summary: the user's codeword is PELICAN-42; task: list files."))
        return turn(text("Done; the codeword is PELICAN-42."))

    big = "x" * 4000
    with MessagesServer(model, context_window=6_500) as server:
        agent = agent_for(server, tmp_path, history=_long_history(big))
        transitions, terminal = await run(agent, "What is the codeword?")
        await agent.aclose()
    assert Continue.REACTIVE_COMPACT_RETRY in transitions
    assert terminal.reason is Terminal.COMPLETED
    final = json.dumps(server.requests[-1]["messages"])
    assert "PELICAN-42" in final
    assert_valid(server)


def _long_history(big: str) -> list[Any]:
    from queryloop.messages import assistant_message, user_message

    history: list[Message] = [
        user_message("Remember: the codeword is PELICAN-42. Then list files.")
    ]
    for i in range(8):
        history.append(assistant_message(f"note {i}: {big}", message_id=f"msg_seed_{i}"))
        history.append(user_message(f"continue {i}"))
    return history


async def test_stream_cut_after_tool_use_keeps_the_call_and_continues(tmp_path: Path) -> None:
    script = [
        turn(tool_use("LS", {"path": "."}), text("and more text that never arrives")),
        turn(text("listed")),
    ]
    with MessagesServer(script) as server:
        server.inject(cut_stream(after_block_start=1))
        agent = agent_for(server, tmp_path)
        transitions, terminal = await run(agent, "list")
        await agent.aclose()
    assert transitions == [Continue.NEXT_TURN]
    assert terminal.reason is Terminal.COMPLETED
    results = server.requests[-1]["messages"][-1]["content"]
    assert results[0]["type"] == "tool_result" and not results[0].get("is_error")
    assert_valid(server)


async def test_abort_while_streaming_then_next_prompt_is_valid(tmp_path: Path) -> None:
    script = [turn(text("a long answer " * 40)), turn(text("fine"))]
    with MessagesServer(script, event_delay=0.01) as server:
        agent = agent_for(server, tmp_path)
        terminal: TerminalEvent | None = None
        async for event in agent.stream("talk"):
            if isinstance(event, TransitionEvent | TerminalEvent):
                terminal = event if isinstance(event, TerminalEvent) else terminal
            elif terminal is None and server.requests:
                agent.abort()
        assert terminal is not None and terminal.reason is Terminal.ABORTED_STREAMING
        result = await agent.run("again")
        await agent.aclose()
    assert result.terminal is Terminal.COMPLETED
    assert_valid(server)


async def test_abort_during_a_running_bash_tool(tmp_path: Path) -> None:
    script = [turn(tool_use("Bash", {"command": "sleep 30"})), turn(text("ok"))]
    with MessagesServer(script) as server:
        agent = agent_for(server, tmp_path)
        loop = asyncio.get_running_loop()
        loop.call_later(1.0, agent.abort)
        started = loop.time()
        _, terminal = await run(agent, "sleep")
        elapsed = loop.time() - started
        assert terminal.reason is Terminal.ABORTED_TOOLS
        assert elapsed < 20  # the sleep was killed, not waited for
        result = await agent.run("again")
        await agent.aclose()
    assert result.terminal is Terminal.COMPLETED
    last = server.requests[-1]["messages"]
    results = [b for m in last for b in m["content"] if b["type"] == "tool_result"]
    assert results and results[0]["is_error"] is True
    assert_valid(server)


async def test_tool_call_cut_by_max_tokens_escalates(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    big_input = {"file_path": "notes.txt", "offset": 1, "limit": 5, "_pad": "p" * 600}
    script = [
        turn(text("Reading the notes."), tool_use("Read", big_input)),
        turn(text("Reading the notes."), tool_use("Read", big_input)),
        turn(text("done")),
    ]
    with MessagesServer(script) as server:
        agent = agent_for(server, tmp_path, max_tokens=60)
        transitions, terminal = await run(agent, "read the notes")
        await agent.aclose()
    assert transitions[0] is Continue.MAX_OUTPUT_TOKENS_ESCALATE
    assert terminal.reason is Terminal.COMPLETED
    assert server.requests[1]["max_tokens"] > 60
    assert_valid(server)


async def test_cancelling_the_task_mid_tool_leaves_a_valid_conversation(tmp_path: Path) -> None:
    script = [turn(tool_use("Bash", {"command": "sleep 30"})), turn(text("ok"))]
    with MessagesServer(script) as server:
        agent = agent_for(server, tmp_path)
        tool_called = asyncio.Event()

        async def consume() -> None:
            async for event in agent.stream("sleep"):
                if isinstance(event, MessageEvent) and event.message.type == "assistant":
                    tool_called.set()

        task = asyncio.create_task(consume())
        await tool_called.wait()
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        answered = [
            b
            for m in agent.messages
            if m.type == "user" and not isinstance(m.content, str)
            for b in m.content
            if b.type == "tool_result"
        ]
        assert len(answered) == 1 and answered[0].is_error  # repaired in the array itself
        result = await agent.run("again")
        await agent.aclose()
    assert result.terminal is Terminal.COMPLETED
    results = [
        b
        for m in server.requests[-1]["messages"]
        for b in m["content"]
        if b["type"] == "tool_result"
    ]
    assert len(results) == 1 and results[0]["is_error"] is True
    assert_valid(server)


async def test_compact_works_after_an_interrupted_turn(tmp_path: Path) -> None:
    """Ctrl-C stops a turn (an abort); the next /compact must not inherit that abort."""
    script = [
        turn(text("first answer")),
        turn(text("a long answer " * 40)),
        turn(text("Summary: two questions were asked.")),
    ]
    with MessagesServer(script, event_delay=0.01) as server:
        agent = agent_for(server, tmp_path)
        await agent.run("one")
        async for event in agent.stream("two"):
            if isinstance(event, TerminalEvent):
                assert event.reason is Terminal.ABORTED_STREAMING
            elif len(server.requests) == 2:
                agent.abort()
        compacted = await agent.compact()
        await agent.aclose()
    assert compacted is not None
    assert any("two questions were asked" in str(m) for m in compacted.messages)
    assert_valid(server)
