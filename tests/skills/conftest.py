"""The skills tests' agents talk to the local server with a test key."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
