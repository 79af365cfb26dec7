"""Prompts queued while a turn runs: the SDK's `Agent.queue()` over the local server."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest

from agent_support import agent_on as shared_agent_on
from agent_support import messages_json
from queryloop.context.kinds import AttachmentType
from queryloop.context.queue import PromptQueue
from queryloop.loop import MessageEvent, RequestStart, Terminal
from queryloop.messages import AssistantMessage, AttachmentMessage
from queryloop.testing import MessagesServer, text, tool_use, turn

QUEUED_INTRO = "The user sent the following message while you were working:"


pytestmark = pytest.mark.usefixtures("home")


agent_on = partial(shared_agent_on, permission_mode="bypassPermissions")


async def test_queued_prompt_reaches_the_model_at_the_next_tool_result(tmp_path: Path) -> None:
    script = [
        turn(text("Running."), tool_use("Bash", {"command": "echo one"})),
        turn(text("Noted the docs too.")),
    ]
    with MessagesServer(script) as server:
        agent = agent_on(server, tmp_path)
        async for event in agent.stream("run it"):
            if isinstance(event, MessageEvent) and isinstance(event.message, AssistantMessage):
                if any(b.type == "tool_use" for b in event.message.content):
                    agent.queue("also check the docs")
                    assert agent.queued == ["also check the docs"]
        await agent.aclose()
        bodies = server.requests
    assert agent.last_terminal is not None
    assert agent.last_terminal.reason is Terminal.COMPLETED
    assert "also check the docs" not in messages_json(bodies[0])
    assert f"{QUEUED_INTRO}\\nalso check the docs" in messages_json(bodies[1])
    assert agent.queued == [] and agent.take_queued() is None
    # It is in the array as a queued_command attachment, after the tool result.
    kinds = [m.attachment.type for m in agent.messages if isinstance(m, AttachmentMessage)]
    assert AttachmentType.QUEUED_COMMAND in kinds
    assert all(not v for v in server.violations)


async def test_a_prompt_queued_after_the_last_tool_boundary_is_the_next_prompt(
    tmp_path: Path,
) -> None:
    script = [turn(text("A short answer.")), turn(text("Answering the queued one."))]
    with MessagesServer(script) as server:
        agent = agent_on(server, tmp_path)
        async for event in agent.stream("first"):
            if isinstance(event, RequestStart):
                agent.queue("second")
                agent.queue("third")
        assert "second" not in messages_json(server.requests[0])
        follow_up = agent.take_queued()
        assert follow_up == "second\n\nthird"
        result = await agent.run(follow_up)
        await agent.aclose()
        bodies = server.requests
    assert result.text == "Answering the queued one."
    assert bodies[1]["messages"][-1]["content"][0]["text"] == "second\n\nthird"


def test_prompt_queue_basics() -> None:
    seen: list[int] = []
    queue = PromptQueue(on_change=lambda items: seen.append(len(items)))
    assert queue.put("   ") is None
    queue.put(" a ")
    queue.put("b")
    assert [i.text for i in queue.items] == ["a", "b"]
    assert queue.take() == "a\n\nb"
    assert queue.take() is None and len(queue) == 0
    assert seen == [1, 2, 0]
