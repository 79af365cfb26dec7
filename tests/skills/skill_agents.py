"""The Agent the skills and commands tests run: trusted, on the local server, no retries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from queryloop import Agent
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer


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
