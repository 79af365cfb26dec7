"""Every batch test talks to the local server with a test key and its own state folder."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _env(home: Path) -> None:
    """Every batch test has its own home under tmp_path, and an API key."""
