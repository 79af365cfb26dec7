"""The local Messages API server, as the SDK's code sees it: through the environment.

Code written for the Claude Agent SDK passes no base URL; the `anthropic` client underneath
queryloop reads `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY`, so `sdk_server` sets them and
makes the test's folder the working directory (the SDK's default `cwd`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from queryloop.testing import MessagesServer


@pytest.fixture
def sdk_server(
    messages_server: MessagesServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[MessagesServer]:
    """A running server with an empty script (fill it with `.script([...])`)."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_server.base_url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("QUERYLOOP_MODEL", raising=False)
    monkeypatch.chdir(tmp_path)
    yield messages_server
    assert [v for v in messages_server.violations if v] == []
