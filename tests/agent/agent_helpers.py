"""An Agent on the local Messages API server, for the tests of this folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from queryloop import Agent
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer

FAST_RETRY = RetryPolicy(max_retries=1, base_delay=0.01)


def local_agent(server: MessagesServer, cwd: Path, **kw: Any) -> Agent:
    """An Agent whose provider it builds itself (and closes) for `server`, retrying once,
    fast; `kw` are more Agent options."""
    return Agent("claude-sonnet-5-5", base_url=server.base_url, retry=FAST_RETRY, cwd=cwd, **kw)
