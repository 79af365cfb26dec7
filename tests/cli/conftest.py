"""Fixtures shared by the CLI tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pty_support import ReplChild


@pytest.fixture
def children() -> Iterator[list[ReplChild]]:
    """The REPL processes a test starts (it appends them); any still running is killed at
    the end, whatever the test's outcome."""
    made: list[ReplChild] = []
    yield made
    for child in made:
        child.close()
