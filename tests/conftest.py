"""Suite-wide settings.

Every test runs with its own, empty `$QUERYLOOP_HOME`, Claude Code folders (`CLAUDE_CONFIG_DIR`,
its managed folder) and managed-settings path, so tests never read or write the user's
`~/.queryloop`, `~/.claude` or `/etc/claude-code`, and tests running at the same time in other
pytest-xdist workers never see each other's settings, sessions or trust records. Tests that
need a particular home still set `QUERYLOOP_HOME` themselves (that wins: it runs later).

Hypothesis: in CI (the `CI` environment variable is set) the property tests run a fixed,
derandomized set of examples, so a green commit stays green; locally they explore new
examples on every run and keep failures in `.hypothesis/`.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

from postgres_support import PostgresCluster, PostgresUnavailable, postgres_bin, private_cluster
from queryloop.tools.base import ToolContext

if TYPE_CHECKING:
    from queryloop.session.postgres_store import PostgresSessionStore

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The `slow` tests first, in their order: pytest-xdist hands tests out in collection
    order, so a minute-long end-to-end test handed out last would be the whole run's tail."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture(autouse=True)
def _own_queryloop_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh home per test, outside tmp_path so tests that list tmp_path do not see it."""
    home = tmp_path_factory.mktemp("queryloop-home")
    monkeypatch.setenv("QUERYLOOP_HOME", str(home))
    monkeypatch.setenv("QUERYLOOP_MANAGED_SETTINGS", str(home / "managed-settings.json"))
    # Claude Code's user folder (~/.claude: commands, settings, plugins) is this test's too,
    # and so is its managed folder (/etc/claude-code).
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude"))
    monkeypatch.setenv("QUERYLOOP_CLAUDE_MANAGED_DIR", str(home / "claude-managed"))
    monkeypatch.delenv("QUERYLOOP_SESSION_STORE", raising=False)  # the JSONL files, unless set


@pytest.fixture(autouse=True)
def _no_repl_tool_use_summaries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The REPL's tool-use summaries are side requests that would take turns from a list
    script: off in tests unless a test sets QUERYLOOP_TOOL_USE_SUMMARIES=1 itself."""
    monkeypatch.setenv("QUERYLOOP_TOOL_USE_SUMMARIES", "0")


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """An API key for the local test server (any key works there)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, api_key: None) -> Path:
    """`$QUERYLOOP_HOME` at `tmp_path / "home"` (not made), for tests that write settings or
    look at sessions there; with an API key."""
    home = tmp_path / "home"
    monkeypatch.setenv("QUERYLOOP_HOME", str(home))
    return home


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    """A tool context working in `tmp_path` (a test that needs another folder defines its own)."""
    return ToolContext(cwd=tmp_path)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A private PostgreSQL cluster for this pytest worker (tests/postgres_support.py);
    the tests that use it skip, saying why, where PostgreSQL or psycopg is missing."""
    try:
        postgres_bin()
        import psycopg  # noqa: F401  (the optional extra `postgres`)
    except PostgresUnavailable as exc:
        pytest.skip(str(exc))
    except ImportError:
        pytest.skip("psycopg is not installed: pip install 'queryloop[postgres]' (./run does)")
    with private_cluster() as cluster:
        yield cluster


@pytest.fixture(scope="session")
def postgres_dsn(postgres_cluster: PostgresCluster) -> str:
    """A database of this worker's cluster (tests keep apart by table or project key)."""
    return postgres_cluster.create_database()


@pytest.fixture
def postgres_store(postgres_dsn: str) -> Iterator[PostgresSessionStore]:
    """A `PostgresSessionStore` on a table of its own (a fresh, empty store per test)."""
    from queryloop.session.postgres_store import PostgresSessionStore

    store = PostgresSessionStore(postgres_dsn, table=f"sessions_{uuid.uuid4().hex[:12]}")
    yield store
    store.close()
