"""The Agent the skills and commands tests run: trusted, on the local server, no retries."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from queryloop import Agent
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer, Turn


def agent_on(server: MessagesServer, env: dict[str, Path], **kw: Any) -> Agent:
    """An Agent in `env["proj"]` with `env["home"]` as its home (trusted unless `kw` says)."""
    kw.setdefault("trust", True)
    return Agent(
        "claude-sonnet-5-5",
        base_url=server.base_url,
        retry=RetryPolicy(max_retries=0, base_delay=0.01),
        cwd=env["proj"],
        home=env["home"],
        **kw,
    )


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


def write(path: Path, content: str) -> Path:
    """`content` at `path`, its folders made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path
