"""A real session over HTTP whose transcript has everything the report draws: parallel tool
calls started while the model streams, a denied call, a failing call, an output-limit
escalation, a manual compaction and three terminals."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from queryloop import Agent, tool
from queryloop.providers.retry import RetryPolicy
from queryloop.session import session_path
from queryloop.testing import MessagesServer, text, tool_use, turn


@tool(read_only=True)
async def slow_lookup(key: str) -> str:
    """Look a key up slowly.

    Args:
        key: The key.
    """
    await asyncio.sleep(0.3)
    return f"value of {key}"


@tool(read_only=True)
def broken(key: str) -> str:
    """Always fails.

    Args:
        key: Ignored.
    """
    raise ValueError(f"no such key {key}")


SCRIPT = [
    turn(
        text("Looking things up."),
        tool_use("slow_lookup", {"key": "a"}),
        tool_use("slow_lookup", {"key": "b"}),
        tool_use("slow_lookup", {"key": "c"}),
        text("While those run, more words " * 4),
    ),
    turn(
        text("Now writing."),
        tool_use("Write", {"file_path": "out.txt", "content": "x"}),
        tool_use("broken", {"key": "z"}),
    ),
    turn(text("word " * 250)),
    turn(text("word " * 250)),
    turn(text("All done.")),
    turn(text("<summary>Looked up a, b, c; a write was denied.</summary>")),
    turn(text("Still here after the compaction.")),
]


@dataclass(frozen=True)
class RecordedSession:
    transcript: Path
    session_id: str
    cwd: Path


def record_session(tmp_path_factory: pytest.TempPathFactory) -> RecordedSession:
    """Run the scripted session (a few seconds) and return where its transcript is."""
    root = tmp_path_factory.mktemp("report-session")
    cwd = root / "project"
    cwd.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ANTHROPIC_API_KEY", "test-key")
        mp.setenv("QUERYLOOP_HOME", str(root / "home"))
        return asyncio.run(_record(cwd, root / "home"))


async def _record(cwd: Path, home: Path) -> RecordedSession:
    with MessagesServer(SCRIPT, event_delay=0.002) as server:
        agent = Agent(
            "claude-sonnet-5-5",
            base_url=server.base_url,
            cwd=cwd,
            home=home,
            max_tokens=200,
            tools=[slow_lookup, broken],
            retry=RetryPolicy(max_retries=1, base_delay=0.01),
        )
        try:
            await agent.run("look up a, b and c")
            await agent.run("summarise")
            await agent.compact()
            await agent.run("and now?")
        finally:
            await agent.aclose()
    path = session_path(agent.session_id, cwd, home)
    return RecordedSession(path, agent.session_id, cwd)
