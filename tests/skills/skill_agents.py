"""The Agent the skills and commands tests run: trusted, on the local server, no retries."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_support import agent_on as shared_agent_on
from queryloop import Agent
from queryloop.testing import MessagesServer, Turn


def agent_on(server: MessagesServer, env: dict[str, Path], **kw: Any) -> Agent:
    """An Agent in `env["proj"]` with `env["home"]` as its home (trusted unless `kw` says)."""
    kw.setdefault("trust", True)
    return shared_agent_on(server, env["proj"], env["home"], **kw)


async def run_in(folder: Path, prompt: str, script: Sequence[Turn]) -> tuple[Agent, list[Any]]:
    """Run one prompt in `folder` (trusted, bypassPermissions: only what a test sets up stops
    a command) against a local server playing `script`; the agent and the requests sent."""
    with MessagesServer(script) as server:
        agent = Agent(
            "claude-sonnet-5-5",
            base_url=server.base_url,
            cwd=folder,
            trust=True,
            permission_mode="bypassPermissions",
        )
        try:
            await agent.run(prompt)
        finally:
            await agent.aclose()
        return agent, server.requests
