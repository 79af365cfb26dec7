"""The runtime is built once: `assemble()`'s parts are wired at construction and never
changed after, and the model name has one home (the request builder)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import local_agent

from queryloop.agent.runtime import Runtime
from queryloop.hooks import HookWarning
from queryloop.loop import QueryParams, RequestStart, Terminal
from queryloop.messages import AssistantMessage
from queryloop.session import load_transcript
from queryloop.testing import MessagesServer, overloaded, text, turn

pytestmark = pytest.mark.usefixtures("home")


async def test_the_runtime_is_frozen_and_wired_at_construction(tmp_path: Path) -> None:
    with MessagesServer([turn(text("hi"))]) as server:
        agent = local_agent(server, tmp_path)
        await agent.start()
        runtime = agent._runtime
        assert isinstance(runtime, Runtime)
        for item in dataclasses.fields(Runtime):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(runtime, item.name, getattr(runtime, item.name))
        # What used to be patched in after construction is there from the start.
        params = runtime.params
        assert params.attachments == runtime.attachments.turn
        assert params.task_events == runtime.tasks.drain_events
        assert params.tool_context.observer is runtime.timing
        assert params.tool_context.subagents is runtime.subagents.host
        assert params.tool_context.tasks is runtime.tasks
        assert runtime.subagents.host.schemas is runtime.builder.schemas  # the same bytes
        assert runtime.prompt_queue is agent.prompt_queue
        assert runtime.hooks.on_warning == runtime.notices.hook_warning
        runtime.hooks.on_warning(HookWarning("SessionStart", "./check.sh\nmore", "timed out"))
        assert agent.notices[-1] == "SessionStart hook './check.sh …' timed out"  # words
        await agent.aclose()


async def test_the_model_name_is_kept_in_one_place(tmp_path: Path) -> None:
    """The request builder names the session's model; a fallback changes the model of the
    rest of that prompt only, and then the requests, the transcript's messages and its usage
    records all name the fallback; the next prompt starts from the builder's model again."""
    assert "model" not in {f.name for f in dataclasses.fields(QueryParams)}
    assert "extra" not in {f.name for f in dataclasses.fields(QueryParams)}
    script = [turn(text("from the fallback")), turn(text("from the main model"))]
    with MessagesServer(script) as server:
        server.inject(overloaded(), overloaded())
        agent = local_agent(server, tmp_path, fallback_model="claude-haiku-5-5")
        started: list[str] = []
        async for event in agent.stream("first"):
            if isinstance(event, RequestStart):
                started.append(event.model)
        second = await agent.run("second")
        runtime = agent._runtime
        assert runtime is not None and agent.model == runtime.builder.model
        assert runtime.model == "claude-sonnet-5-5"
        transcript = runtime.transcript
        assert transcript is not None
        path = transcript.path
        await agent.aclose()
    assert agent.last_terminal is not None and second.terminal is Terminal.COMPLETED
    sent = [r["model"] for r in server.requests]
    assert sent == ["claude-sonnet-5-5", "claude-sonnet-5-5", "claude-haiku-5-5",
                    "claude-sonnet-5-5"]  # fmt: skip
    assert started == ["claude-sonnet-5-5", "claude-haiku-5-5"]
    answers = [m for m in load_transcript(path).messages if isinstance(m, AssistantMessage)]
    assert [m.model for m in answers] == ["claude-haiku-5-5", "claude-sonnet-5-5"]
    records: list[dict[str, Any]] = [json.loads(line) for line in path.read_text().splitlines()]
    usage = [r["model"] for r in records if r.get("record") == "usage" and r["kind"] == "main"]
    assert usage == ["claude-haiku-5-5", "claude-sonnet-5-5"]
    header = next(r for r in records if r.get("record") == "meta")
    assert header.get("model") == "claude-sonnet-5-5"
