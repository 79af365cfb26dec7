"""The Agent end to end: the real loop, real tools and the official SDK against the local
Messages API server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import local_agent

from queryloop import Agent, tool
from queryloop.loop import Continue, Terminal, TransitionEvent
from queryloop.messages import AssistantMessage, Message
from queryloop.providers import TextDelta
from queryloop.session import load_transcript
from queryloop.testing import MessagesServer, overloaded, text, tool_use, turn


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("QUERYLOOP_HOME", str(home))
    return home


def make_agent(server: MessagesServer, cwd: Path, home: Path, **kw: Any) -> Agent:
    """An Agent on the local server; the provider is built by the Agent (and closed by it)."""
    return local_agent(server, cwd, home=home, **kw)


@pytest.fixture(autouse=True)
def _server_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")


def assert_no_violations(server: MessagesServer) -> None:
    assert [v for v in server.violations if v] == []


async def test_multi_turn_tool_use_edits_a_real_file(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "greet.py").write_text("print('helo')\n")
    script = [
        turn(tool_use("Read", {"file_path": "greet.py"})),
        turn(
            tool_use("Edit", {"file_path": "greet.py", "old_string": "helo", "new_string": "hello"})
        ),
        turn(tool_use("Bash", {"command": "python3 greet.py"})),
        turn(text("Fixed the typo; it prints hello.")),
    ]
    with MessagesServer(script) as server:
        agent = make_agent(server, project, home, permission_mode="bypassPermissions")
        result = await agent.run("Fix the typo in greet.py")
        await agent.aclose()
    assert result.terminal is Terminal.COMPLETED
    assert result.text == "Fixed the typo; it prints hello."
    assert (project / "greet.py").read_text() == "print('hello')\n"
    assert result.turns == 4
    assert result.cost_usd > 0
    bash_result = server.requests[3]["messages"][-1]["content"]
    assert any("hello" in str(block) for block in bash_result)
    assert_no_violations(server)


async def test_conversation_continues_across_prompts_and_resumes(
    tmp_path: Path, home: Path
) -> None:
    script = [turn(text("first answer")), turn(text("second answer")), turn(text("third"))]
    with MessagesServer(script) as server:
        agent = make_agent(server, tmp_path, home)
        await agent.run("one")
        await agent.run("two")
        session_id = agent.session_id
        await agent.aclose()
        texts = [
            b["text"]
            for m in server.requests[1]["messages"]
            for b in m["content"]
            if b["type"] == "text"
        ]
        assert "first answer" in texts and "two" in texts
        resumed = Agent.resume(
            session_id, "claude-sonnet-5-5", base_url=server.base_url, cwd=tmp_path, home=home
        )
        result = await resumed.run("three")
        await resumed.aclose()
    assert result.text == "third"
    third = str(server.requests[2]["messages"])
    assert "first answer" in third and "second answer" in third
    assert_no_violations(server)


async def test_every_message_is_in_the_transcript_as_created(tmp_path: Path, home: Path) -> None:
    script = [turn(tool_use("LS", {"path": "."})), turn(text("done"))]
    with MessagesServer(script) as server:
        agent = make_agent(server, tmp_path, home)
        await agent.run("list")
        path = agent.session.transcript.path  # type: ignore[union-attr]
        await agent.aclose()
    loaded = load_transcript(path)
    kinds = [m.type for m in loaded.messages]
    assert kinds.count("assistant") == 2 and "user" in kinds
    assert any(isinstance(m, AssistantMessage) and m.usage for m in loaded.messages)


async def test_three_safe_tools_overlap_and_start_before_the_stream_ends(
    tmp_path: Path, home: Path
) -> None:
    # Causal, not timed: each probe waits until all three are running at once (so run one
    # after another they would never finish), and notes whether the answer's text after the
    # three calls had reached the caller when it started.
    running: list[str] = []
    all_running = asyncio.Event()
    text_seen_at_start: list[bool] = []
    seen_text: list[str] = []

    @tool(concurrency_safe=True, read_only=True)
    async def slow_probe(name: str) -> str:
        """Wait until the other probes run too, then report.

        Args:
            name: Which probe.
        """
        text_seen_at_start.append("waiting" in "".join(seen_text))
        running.append(name)
        if len(running) == 3:
            all_running.set()
        await asyncio.wait_for(all_running.wait(), timeout=30)
        return f"probe {name} ok"

    script = [
        turn(
            tool_use("slow_probe", {"name": "a"}),
            tool_use("slow_probe", {"name": "b"}),
            tool_use("slow_probe", {"name": "c"}),
            text("waiting for probes"),
        ),
        turn(text("all probes ok")),
    ]
    with MessagesServer(script, event_delay=0.05) as server:
        agent = make_agent(server, tmp_path, home, tools=[slow_probe])
        async for event in agent.stream("probe"):
            if isinstance(event, TextDelta):
                seen_text.append(event.text)
        await agent.aclose()
    assert sorted(running) == ["a", "b", "c"] and all_running.is_set()
    # The first probe started while the response was still streaming.
    assert text_seen_at_start[0] is False
    results = str(server.requests[1]["messages"][-1]["content"])
    assert all(f"probe {n} ok" in results for n in "abc")
    assert_no_violations(server)


async def test_fallback_model_after_repeated_overload(tmp_path: Path, home: Path) -> None:
    script = [turn(text("answer from the fallback"))]
    with MessagesServer(script) as server:
        server.inject(overloaded(), overloaded())
        agent = make_agent(server, tmp_path, home, fallback_model="claude-haiku-5-5")
        transitions: list[Continue] = []
        async for event in agent.stream("hello"):
            if isinstance(event, TransitionEvent):
                transitions.append(event.reason)
        await agent.aclose()
    models = [r["model"] for r in server.requests]
    assert models[-1] == "claude-haiku-5-5" and models[0] == "claude-sonnet-5-5"
    assert agent.last_terminal is not None
    assert agent.last_terminal.reason is Terminal.COMPLETED


async def test_autocompact_runs_pre_compact_hooks_and_keeps_the_task(
    tmp_path: Path, home: Path
) -> None:
    from queryloop.messages import assistant_message, user_message

    seen: list[dict[str, Any]] = []

    def pre_compact(event: dict[str, Any]) -> dict[str, Any]:
        seen.append(event)
        return {"hookSpecificOutput": {"additionalContext": "Mention the word ZEBRA."}}

    summaries: list[str] = []

    def model(body: dict[str, Any]) -> Any:
        last = str(body["messages"][-1])
        if "ZEBRA" in last:
            summaries.append(last)
            return turn(text("Summary: the task is to count sheep; ZEBRA noted."))
        return turn(text("Still counting sheep."))

    history: list[Message] = [user_message("Task: count the sheep in the field.")]
    for i in range(12):
        history.append(assistant_message(f"Counted batch {i}: " + "sheep " * 400))
        history.append(user_message(f"next batch {i}"))
    with MessagesServer(model) as server:
        agent = make_agent(
            server,
            tmp_path,
            home,
            history=history,
            hooks={"PreCompact": [pre_compact]},
            autocompact_threshold=3_000,
            context_collapse=False,
        )
        result = await agent.run("keep going")
        await agent.aclose()
    assert result.terminal is Terminal.COMPLETED
    assert [e["trigger"] for e in seen] == ["auto"]
    assert summaries, "the compaction request carried the hook's instructions"
    assert "count the sheep" in str(server.requests[-1]["messages"])
    assert_no_violations(server)


def test_unknown_option_is_a_clear_error() -> None:
    from queryloop.errors import ConfigError

    with pytest.raises(ConfigError, match=r"unknown Agent option.*max_turn.*valid options"):
        Agent("claude-sonnet-5-5", max_turn=3)  # type: ignore[call-arg]


async def test_one_prompt_at_a_time(tmp_path: Path, home: Path) -> None:
    from queryloop.errors import QueryloopError

    with MessagesServer([turn(text("slow answer " * 30)), turn(text("b"))], event_delay=0.01) as s:
        agent = make_agent(s, tmp_path, home)
        first = asyncio.create_task(agent.run("a"))
        await asyncio.sleep(0.2)
        with pytest.raises(QueryloopError, match="already running"):
            await agent.run("b")
        assert (await first).terminal is Terminal.COMPLETED
        assert (await agent.run("b")).text == "b"
        await agent.aclose()
