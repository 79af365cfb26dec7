"""`PostgresSessionStore` against a real PostgreSQL server (a private cluster per worker,
tests/postgres_support.py).

The `SessionStore` contract (append order, deep equality under `jsonb`'s key order, unknown
keys, newest first, delete cascade, sorted subkeys, threads, a second instance) is the shared
suite's (tests/session/store_conformance.py, its `postgres` store). Here: two writer processes
at once (both creating the table), a writer killed with SIGKILL loses no returned append, a
dropped connection is reopened, an unreachable server is a clear error without the password,
U+0000 survives, the store pickles as its DSN.
"""

from __future__ import annotations

import pickle
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from postgres_support import PASSWORD, PostgresCluster
from queryloop.errors import QueryloopError
from queryloop.session.postgres_store import (
    PostgresSessionStore,
    SessionStoreUnavailableError,
)
from queryloop.session.store_api import SessionKey

WRITER = Path(__file__).with_name("store_writer.py")


def _key(session: str = "s1", subpath: str | None = None, project: str = "proj") -> SessionKey:
    key = SessionKey(project_key=project, session_id=session)
    if subpath is not None:
        key["subpath"] = subpath
    return key


# ---- beside the shared suite --------------------------------------------------------------


def test_main_key_with_empty_subpath_is_the_main_transcript(
    postgres_store: PostgresSessionStore,
) -> None:
    store = postgres_store
    store.append(_key(subpath=""), [{"record": "a"}])
    store.append(_key(), [{"record": "b"}])
    assert store.load(_key()) == [{"record": "a"}, {"record": "b"}]
    assert store.list_subkeys({"project_key": "proj", "session_id": "s1"}) == []


def test_projects_are_listed_and_a_session_is_found_in_any(
    postgres_store: PostgresSessionStore,
) -> None:
    from queryloop.session.stores import find_transcript

    for project in ("-b", "-a", "-c", "-a"):
        postgres_store.append(_key("s-" + project, project=project), [{"record": "m"}])
    assert postgres_store.list_projects() == ["-a", "-b", "-c"]
    found = find_transcript(postgres_store, "s--c", cwd=None)  # `--resume ID` from elsewhere
    assert (found.project_key, found.session_id) == ("-c", "s--c")
    assert "s--c" in found.location and PASSWORD not in found.location


def test_two_processes_append_to_different_sessions(postgres_dsn: str) -> None:
    # A table neither has seen: both create it at once, too.
    table = f"sessions_{uuid.uuid4().hex[:12]}"
    writers = [
        subprocess.Popen(
            [sys.executable, str(WRITER), postgres_dsn, table, "proj", session, "20"],
            stdout=subprocess.DEVNULL,
        )
        for session in ("w1", "w2")
    ]
    assert [w.wait(timeout=120) for w in writers] == [0, 0]
    with PostgresSessionStore(postgres_dsn, table=table) as store:
        for session in ("w1", "w2"):
            loaded = store.load(_key(session)) or []
            assert [e["index"] for e in loaded] == list(range(20))
        assert {e["session_id"] for e in store.list_sessions("proj")} == {"w1", "w2"}


# ---- PostgreSQL's own ---------------------------------------------------------------------


def test_a_writer_killed_with_sigkill_loses_no_returned_append(postgres_dsn: str) -> None:
    table = f"sessions_{uuid.uuid4().hex[:12]}"
    writer = subprocess.Popen(
        [sys.executable, str(WRITER), postgres_dsn, table, "proj", "killed", "100000"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    acknowledged: list[int] = []
    for line in writer.stdout:
        acknowledged.append(int(line))
        if len(acknowledged) == 30:
            writer.send_signal(signal.SIGKILL)
            break
    writer.wait(timeout=30)
    acknowledged += [int(line) for line in writer.stdout.read().split()]
    with PostgresSessionStore(postgres_dsn, table=table) as store:
        stored = [e["index"] for e in store.load(_key("killed")) or []]
    assert writer.returncode == -signal.SIGKILL
    # Every append that returned is there, in order; at most the one in flight besides.
    assert stored[: len(acknowledged)] == acknowledged == list(range(len(acknowledged)))
    assert len(stored) - len(acknowledged) in (0, 1)


def test_a_dropped_connection_is_reopened(
    postgres_store: PostgresSessionStore, postgres_cluster: PostgresCluster, postgres_dsn: str
) -> None:
    postgres_store.append(_key(), [{"record": "before"}])
    database = postgres_dsn.rsplit("/", 1)[1]
    assert postgres_cluster.terminate_backends(database) >= 1
    postgres_store.append(_key(), [{"record": "after"}])  # no error: reconnected once
    postgres_cluster.terminate_backends(database)
    assert postgres_store.load(_key()) == [{"record": "before"}, {"record": "after"}]


def test_an_unreachable_server_is_a_clear_error_without_the_password(
    postgres_cluster: PostgresCluster,
) -> None:
    dead = f"postgresql://postgres:{PASSWORD}@127.0.0.1:{_closed_port()}/nowhere"
    store = PostgresSessionStore(dead)
    with pytest.raises(SessionStoreUnavailableError) as caught:
        store.load(_key())
    message = str(caught.value)
    assert isinstance(caught.value, QueryloopError)
    assert "postgresql://postgres:***@127.0.0.1:" in message
    assert PASSWORD not in message and PASSWORD not in repr(store)
    wrong = postgres_cluster.dsn().replace(PASSWORD, "not-the-password")
    with pytest.raises(SessionStoreUnavailableError, match="password authentication failed"):
        PostgresSessionStore(wrong).list_sessions("proj")


def test_a_role_with_the_documented_grants_uses_a_table_its_owner_made(
    postgres_cluster: PostgresCluster, postgres_dsn: str
) -> None:
    # docs/sessions.md, "Permissions": SELECT, INSERT, DELETE and the sequence's USAGE.
    import psycopg

    table, role = f"sessions_{uuid.uuid4().hex[:12]}", f"app_{uuid.uuid4().hex[:12]}"
    database = postgres_dsn.rsplit("/", 1)[1]
    app_dsn = f"postgresql://{role}:app-pw@127.0.0.1:{postgres_cluster.port}/{database}"
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'app-pw'")
        with pytest.raises(QueryloopError, match="permission denied for schema public"):
            PostgresSessionStore(app_dsn, table=table).load(_key())  # may not create it
        with PostgresSessionStore(postgres_dsn, table=table) as owner:
            owner.append(_key(), [{"record": "by the owner"}])
        admin.execute(f"GRANT SELECT, INSERT, DELETE ON {table} TO {role}")
        admin.execute(f"GRANT USAGE ON SEQUENCE {table}_id_seq TO {role}")
    with PostgresSessionStore(app_dsn, table=table) as app:
        app.append(_key(subpath="subagents/agent-a"), [{"record": "by the app"}])
        assert app.load(_key()) == [{"record": "by the owner"}]
        assert [e["session_id"] for e in app.list_sessions("proj")] == ["s1"]
        app.delete(_key())
        assert app.list_subkeys({"project_key": "proj", "session_id": "s1"}) == []


def test_a_nul_character_survives(postgres_store: PostgresSessionStore) -> None:
    # jsonb cannot hold U+0000 (a tool's binary output may): stored as JSON text instead.
    entries = [{"record": "message", "text": "a\x00b", "nested": [{"k\x00": "\\u0000"}]}]
    postgres_store.append(_key(), entries)
    assert postgres_store.load(_key()) == entries


def test_a_pickled_store_opens_its_own_connection(postgres_store: PostgresSessionStore) -> None:
    postgres_store.append(_key(), [{"record": "message"}])  # connected
    copy = pickle.loads(pickle.dumps(postgres_store))  # as a Ray worker receives it
    assert (copy.dsn, copy.table) == (postgres_store.dsn, postgres_store.table)
    copy.append(_key(), [{"record": "from the copy"}])
    assert postgres_store.load(_key()) == [{"record": "message"}, {"record": "from the copy"}]
    copy.close()


def test_table_names_must_be_identifiers(postgres_dsn: str) -> None:
    with pytest.raises(QueryloopError, match="invalid session table name"):
        PostgresSessionStore(postgres_dsn, table="entries; DROP TABLE x")


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
