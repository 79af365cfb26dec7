"""One recorded session shared by the report tests."""

from __future__ import annotations

import pytest
from report_session import RecordedSession, record_session


@pytest.fixture(scope="session")
def recorded_session(tmp_path_factory: pytest.TempPathFactory) -> RecordedSession:
    """The scripted session of `report_session`, run once for the whole package."""
    return record_session(tmp_path_factory)
