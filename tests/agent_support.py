"""Helpers every test folder shares: an Agent on the local scripted server, and a request's
messages as one string to look for markers in. (`tests/` is on `sys.path` for every test:
pytest puts the root conftest's folder there; `./run lint` gives mypy the same path.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from queryloop import Agent
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer

MODEL = "claude-sonnet-5-5"
NO_RETRY = RetryPolicy(max_retries=0, base_delay=0.01)
"""A scripted server answers at once: a retry would only hide a wrong script."""


def agent_on(server: MessagesServer, cwd: Path, home: Path | None = None, **kw: Any) -> Agent:
    """An Agent on `server` working in `cwd` (with `home` as its home when given)."""
    if home is not None:
        kw["home"] = home
    return Agent(MODEL, base_url=server.base_url, retry=NO_RETRY, cwd=cwd, **kw)


def messages_json(body: dict[str, Any]) -> str:
    """Every message of a request as one JSON string (to look for markers in)."""
    return json.dumps(body["messages"])
