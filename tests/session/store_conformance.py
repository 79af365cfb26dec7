"""The `SessionStore` conformance suite: what every store must do, run over every store.

`store_factory` is a fixture parametrised by store kind: each kind's builder gets the test's
request and a temporary folder and returns a function that opens the store, again and again
on the same backend (a second instance plays another process). The tests below take
`store_factory`; `test_store_conformance.py` collects them.

Adding a store is one entry in `STORE_BUILDERS` (and its builder): e.g. PostgreSQL,

    def _postgres(request: pytest.FixtureRequest, folder: Path) -> StoreOpener:
        dsn = request.getfixturevalue("postgres_dsn")  # a fixture that starts a cluster
        return lambda: PostgresSessionStore(dsn)

    STORE_BUILDERS["postgres"] = _postgres

A builder that cannot have its backend calls `pytest.skip` with the reason.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from queryloop.session.jsonl_store import JsonlSessionStore
from queryloop.session.memory_store import InMemorySessionStore
from queryloop.session.sqlite_store import SqliteSessionStore
from queryloop.session.store_api import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
)
from queryloop.session.stores import close_store

StoreOpener = Callable[[], SessionStore]
StoreBuilder = Callable[[pytest.FixtureRequest, Path], StoreOpener]


def _jsonl(request: pytest.FixtureRequest, folder: Path) -> StoreOpener:
    return lambda: JsonlSessionStore(folder / "projects")


def _sqlite(request: pytest.FixtureRequest, folder: Path) -> StoreOpener:
    return lambda: SqliteSessionStore(folder / "sessions.db")


def _memory(request: pytest.FixtureRequest, folder: Path) -> StoreOpener:
    shared = InMemorySessionStore()  # one process: every "instance" is the same store
    return lambda: shared


def _sdk_async(request: pytest.FixtureRequest, folder: Path) -> StoreOpener:
    # The Claude Agent SDK's async InMemorySessionStore behind our synchronous adapter.
    from queryloop.claude_agent_sdk import InMemorySessionStore as SdkMemoryStore
    from queryloop.session.async_store import SyncStoreAdapter

    shared = SdkMemoryStore()
    return lambda: SyncStoreAdapter(shared)


def _postgres(request: pytest.FixtureRequest, folder: Path) -> StoreOpener:
    # This worker's private cluster (tests/postgres_support.py); a table per test.
    dsn = request.getfixturevalue("postgres_dsn")
    from queryloop.session.postgres_store import PostgresSessionStore

    table = f"sessions_{uuid.uuid4().hex[:12]}"
    return lambda: PostgresSessionStore(dsn, table=table)


STORE_BUILDERS: dict[str, StoreBuilder] = {
    "jsonl": _jsonl,
    "sqlite": _sqlite,
    "postgres": _postgres,
    "memory": _memory,
    "sdk-async": _sdk_async,
}
"""Every store the suite runs over, by name (add one here)."""


@pytest.fixture(params=sorted(STORE_BUILDERS))
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreOpener]:
    """Opens a store of the parametrised kind on one backend; closed after the test."""
    opener = STORE_BUILDERS[request.param](request, tmp_path)
    opened: list[SessionStore] = []

    def open_store() -> SessionStore:
        store = opener()
        opened.append(store)
        return store

    yield open_store
    for store in opened:
        close_store(store)


def key(session: str, project: str = "-work-proj", subpath: str = "") -> SessionKey:
    made = SessionKey(project_key=project, session_id=session)
    if subpath:
        made["subpath"] = subpath
    return made


def message(n: int, **extra: Any) -> SessionStoreEntry:
    return {"record": "message", "session_id": "s", "n": n, **extra}


# ---- the suite ---------------------------------------------------------------------------


def check_round_trip_in_order(store_factory: StoreOpener) -> None:
    store = store_factory()
    entries = [
        message(1, text='héllo ✓ \u2028 "quoted" \n newline'),
        message(2, nested={"a": [1, 2.5, None, True, {"b": "c"}]}),
        {"record": "meta", "session_id": "s", "model": "m", "empty": {}, "list": []},
    ]
    store.append(key("s1"), entries[:1])
    store.append(key("s1"), entries[1:])
    assert store.load(key("s1")) == entries


def check_missing_is_none(store_factory: StoreOpener) -> None:
    store = store_factory()
    assert store.load(key("nope")) is None
    store.append(key("empty"), [])
    assert store.load(key("empty")) is None
    assert store.list_sessions("-work-proj") == []
    assert store.list_subkeys(SessionListSubkeysKey(project_key="-work-proj", session_id="x")) == []


def check_list_sessions_newest_first(store_factory: StoreOpener) -> None:
    store = store_factory()
    before = int(time.time() * 1000) - 1000
    for session in ("a", "b", "c"):
        store.append(key(session), [message(1)])
        time.sleep(0.02)  # distinct mtimes: the kernel stamps files with a jiffy-coarse clock
    store.append(key("a"), [message(2)])
    store.append(key("other", project="-elsewhere"), [message(1)])
    store.append(key("c", subpath="subagents/agent-x"), [message(1)])  # not a session
    listed = store.list_sessions("-work-proj")
    assert [e["session_id"] for e in listed] == ["a", "c", "b"]
    assert all(isinstance(e["mtime"], int) and e["mtime"] >= before for e in listed)
    assert [e["session_id"] for e in store.list_sessions("-elsewhere")] == ["other"]


def check_subkeys(store_factory: StoreOpener) -> None:
    store = store_factory()
    store.append(key("s"), [message(0)])
    store.append(key("s", subpath="subagents/agent-b"), [message(1)])
    store.append(key("s", subpath="subagents/agent-a"), [message(2)])
    store.append(key("t", subpath="subagents/agent-z"), [message(3)])
    listed = store.list_subkeys(SessionListSubkeysKey(project_key="-work-proj", session_id="s"))
    assert listed == ["subagents/agent-a", "subagents/agent-b"]
    assert store.load(key("s", subpath="subagents/agent-a")) == [message(2)]
    assert store.load(key("s")) == [message(0)]


def check_delete(store_factory: StoreOpener) -> None:
    store = store_factory()
    store.append(key("s"), [message(0)])
    store.append(key("s", subpath="subagents/agent-a"), [message(1)])
    store.append(key("s", subpath="subagents/agent-b"), [message(2)])
    store.append(key("keep"), [message(3)])
    store.delete(key("s", subpath="subagents/agent-a"))
    assert store.load(key("s", subpath="subagents/agent-a")) is None
    assert store.load(key("s")) == [message(0)]
    store.delete(key("s"))
    assert store.load(key("s")) is None
    assert store.load(key("s", subpath="subagents/agent-b")) is None
    assert store.list_subkeys(SessionListSubkeysKey(project_key="-work-proj", session_id="s")) == []
    assert [e["session_id"] for e in store.list_sessions("-work-proj")] == ["keep"]
    store.delete(key("never-was"))  # deleting nothing is not an error
    store.append(key("s"), [message(4)])  # a deleted session can start again
    assert store.load(key("s")) == [message(4)]


def check_another_instance_sees_it(store_factory: StoreOpener) -> None:
    writer, reader = store_factory(), store_factory()
    writer.append(key("s"), [message(1)])
    assert reader.load(key("s")) == [message(1)]
    reader.append(key("s"), [message(2)])
    writer.append(key("s"), [message(3)])
    assert writer.load(key("s")) == [message(1), message(2), message(3)]


def check_threads_keep_each_order(store_factory: StoreOpener) -> None:
    store = store_factory()

    def write(session: str) -> None:
        for n in range(40):
            store.append(key(session), [message(n)])

    threads = [threading.Thread(target=write, args=(f"t{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i in range(4):
        assert store.load(key(f"t{i}")) == [message(n) for n in range(40)]


def check_large_entry(store_factory: StoreOpener) -> None:
    store = store_factory()
    big = message(1, text="x" * 1_000_000)
    store.append(key("big"), [big, message(2)])
    assert store.load(key("big")) == [big, message(2)]


CHECKS = [
    check_round_trip_in_order,
    check_missing_is_none,
    check_list_sessions_newest_first,
    check_subkeys,
    check_delete,
    check_another_instance_sees_it,
    check_threads_keep_each_order,
    check_large_entry,
]
