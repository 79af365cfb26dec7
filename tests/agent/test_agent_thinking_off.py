"""A resumed loop whose last response lost its thinking goes with thinking off, then thinks
again (issue 32, item 8): the real Agent, a real transcript, the official SDK, the local
server recording what was sent."""

from __future__ import annotations

from pathlib import Path

from agent_support import MODEL, NO_RETRY
from queryloop import Agent
from queryloop.messages import (
    AssistantMessage,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    UserMessage,
)
from queryloop.messages.blocks import ToolResultBlock
from queryloop.session import Transcript, session_path
from queryloop.testing import MessagesServer, text, thinking, turn

ENABLED = {"type": "enabled", "budget_tokens": 1024}


def interrupted_session(cwd: Path, home: Path) -> str:
    """A loop cut off while the model's second response streamed: thinking unsigned, and
    its tool call never ran (loading adds the interrupted result)."""
    session_id = "0b5e0f2e-8d0e-4c59-9a5e-3a3c1f6b2a10"
    with Transcript(session_path(session_id, cwd, home), session_id) as transcript:
        transcript.start(model="claude-sonnet-4-5", cwd=str(cwd))
        for message in (
            UserMessage(content=(TextBlock("look at a.txt"),)),
            AssistantMessage(
                content=(ThinkingBlock("read it", signature="sig1"), ToolUseBlock("t1", "LS", {})),
                message_id="r1",
            ),
            UserMessage(content=(ToolResultBlock("t1", "a.txt"),)),
            AssistantMessage(
                content=(ThinkingBlock("then", signature=""), ToolUseBlock("t2", "LS", {})),
                message_id="r2",
            ),
        ):
            transcript.append(message)
    return session_id


async def test_the_cut_loop_goes_without_thinking_and_the_next_prompt_thinks(
    tmp_path: Path, home: Path
) -> None:
    session_id = interrupted_session(tmp_path, home)
    script = [
        turn(text("I stopped there.")),
        turn(thinking("fresh", signature="s2"), text("done")),
    ]
    with MessagesServer(script, strict=True) as server:
        agent = Agent.resume(
            session_id,
            MODEL,
            base_url=server.base_url,
            retry=NO_RETRY,
            cwd=tmp_path,
            home=home,
            thinking=ENABLED,
        )
        first = await agent.run("go on")
        second = await agent.run("next")
        await agent.aclose()
    assert not first.is_error and not second.is_error, (first.detail, second.detail)
    sent = server.requests
    assert sent[0]["thinking"] == {"type": "disabled"}
    assert "'thinking'" not in str(sent[0]["messages"])
    assert sent[1]["thinking"] == ENABLED
    assert server.violations == [[], []]
