"""Suite-wide settings.

Hypothesis: in CI (the `CI` environment variable is set) the property tests run a fixed,
derandomized set of examples, so a green commit stays green; locally they explore new
examples on every run and keep failures in `.hypothesis/`.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(autouse=True)
def _no_repl_tool_use_summaries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The REPL's tool-use summaries are side requests that would take turns from a list
    script: off in tests unless a test sets QUERYLOOP_TOOL_USE_SUMMARIES=1 itself."""
    monkeypatch.setenv("QUERYLOOP_TOOL_USE_SUMMARIES", "0")
