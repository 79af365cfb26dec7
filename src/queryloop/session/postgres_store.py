"""`PostgresSessionStore`: sessions as rows of a PostgreSQL table (psycopg 3).

One row per transcript entry, ordered by a `bigserial` id within its key, the schema of the
Claude Agent SDK's reference Postgres adapter (claude-agent-sdk-typescript,
`examples/session-stores/postgres`) with two changes: the main transcript's `subpath` is the
empty string rather than NULL (an equality the key index serves; `IS NOT DISTINCT FROM NULL`
is not indexable), and each append's rows carry the append's id, so a retry after a dropped
connection can tell whether the first attempt committed (nothing lost, nothing twice).

    store = PostgresSessionStore("postgresql://app@db.internal/queryloop")
    store.append({"project_key": key, "session_id": sid}, [record, ...])  # committed on return

Each store object holds one connection, used under a lock (a batch's tasks and a session's
subagents may share the store from several threads); a dropped connection is reopened once.
The table is created when missing, under an advisory lock so that processes starting at once
do not race. Durability: every append is its own transaction, committed with
`synchronous_commit = on` (the WAL is flushed before the commit returns), so an entry whose
`append` returned survives a kill -9 of the writer, or of the server.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.types.json import Jsonb

from .store import SessionError
from .store_api import (
    MAIN_SUBPATH,
    SessionKey,
    SessionListSubkeysKey,
    SessionStoreEntry,
    SessionStoreListEntry,
    subpath_of,
)

DEFAULT_TABLE = "queryloop_session_entries"
CONNECT_TIMEOUT_S = 10
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_NUL_WRAPPER = "queryloop_json_with_nul"
"""`jsonb` cannot hold the character U+0000 (PostgreSQL's text type cannot): an entry that
contains one is stored as its JSON text (where it is the six characters `\\u0000`) under this
one key, and decoded on load."""

_T = TypeVar("_T")


class SessionStoreUnavailableError(SessionError):
    """The store's database could not be reached (or was lost and could not be reopened);
    the message names the DSN without its password."""


class PostgresSessionStore:
    """A `SessionStore` in a PostgreSQL table (see the module docstring)."""

    def __init__(self, dsn: str, *, table: str = DEFAULT_TABLE) -> None:
        if not _IDENTIFIER.match(table):
            raise SessionError(
                f"invalid session table name {table!r}: letters, digits and _ only, "
                "not starting with a digit, at most 63 characters"
            )
        self.dsn = dsn
        self.table = table
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._schema_ready = False

    def __getstate__(self) -> dict[str, str]:
        # Pickled (to a Ray worker, a subprocess) as its DSN and table: the copy opens its
        # own connection; a connection and a lock cannot travel.
        return {"dsn": self.dsn, "table": self.table}

    def __setstate__(self, state: dict[str, str]) -> None:
        self.__init__(state["dsn"], table=state["table"])  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"PostgresSessionStore({redact_dsn(self.dsn)!r}, table={self.table!r})"

    # ---- SessionStore ---------------------------------------------------------------------

    def append(self, key: SessionKey, entries: Sequence[SessionStoreEntry]) -> None:
        """Add `entries` in one transaction, committed (and flushed) before this returns."""
        if not entries:
            return
        rows = [_encode(entry) for entry in entries]
        append_id = uuid.uuid4()
        insert = sql.SQL(
            "INSERT INTO {} (project_key, session_id, subpath, append_id, entry) "
            "VALUES (%s, %s, %s, %s, %s)"
        ).format(self._table)
        params = [(*_key(key), append_id, row) for row in rows]

        def first(conn: psycopg.Connection[Any]) -> None:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(insert, params)

        def retry(conn: psycopg.Connection[Any]) -> None:
            # The first attempt's commit may have reached the server before the connection
            # dropped: its rows carry `append_id`.
            if not self._appended(conn, key, append_id):
                first(conn)

        self._run(first, retry)

    def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The transcript's entries in the order appended; None when it has none."""
        query = sql.SQL(
            "SELECT entry FROM {} WHERE project_key = %s AND session_id = %s AND subpath = %s "
            "ORDER BY id"
        ).format(self._table)

        def read(conn: psycopg.Connection[Any]) -> list[SessionStoreEntry] | None:
            with conn.cursor() as cur:
                cur.execute(query, _key(key))
                entries = [_decode(row[0]) for row in cur.fetchall()]
            return entries or None

        return self._run(read)

    def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The project's sessions (main transcripts), most recently appended to first."""
        query = sql.SQL(
            "SELECT session_id, "
            "(extract(epoch FROM max(created_at)) * 1000)::bigint AS mtime "
            "FROM {} WHERE project_key = %s AND subpath = %s "
            "GROUP BY session_id ORDER BY mtime DESC, max(id) DESC"
        ).format(self._table)

        def read(conn: psycopg.Connection[Any]) -> list[SessionStoreListEntry]:
            with conn.cursor() as cur:
                cur.execute(query, (project_key, MAIN_SUBPATH))
                return [
                    SessionStoreListEntry(session_id=str(sid), mtime=int(mtime))
                    for sid, mtime in cur.fetchall()
                ]

        return self._run(read)

    def delete(self, key: SessionKey) -> None:
        """Remove a transcript; a main key removes the session's subkeys with it."""
        subpath = subpath_of(key)
        if subpath == MAIN_SUBPATH:
            query = sql.SQL("DELETE FROM {} WHERE project_key = %s AND session_id = %s")
            params: tuple[str, ...] = (key["project_key"], key["session_id"])
        else:
            query = sql.SQL(
                "DELETE FROM {} WHERE project_key = %s AND session_id = %s AND subpath = %s"
            )
            params = _key(key)
        statement = query.format(self._table)

        def remove(conn: psycopg.Connection[Any]) -> None:
            with conn.transaction(), conn.cursor() as cur:
                cur.execute(statement, params)

        self._run(remove)

    def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The session's subpaths besides its main transcript, sorted."""
        query = sql.SQL(
            "SELECT DISTINCT subpath FROM {} WHERE project_key = %s AND session_id = %s "
            "AND subpath <> %s"
        ).format(self._table)

        def read(conn: psycopg.Connection[Any]) -> list[str]:
            with conn.cursor() as cur:
                cur.execute(query, (key["project_key"], key["session_id"], MAIN_SUBPATH))
                return sorted(str(row[0]) for row in cur.fetchall())

        return self._run(read)

    # ---- beyond the protocol (session.stores: ListsProjects, Describes) ---------------------

    def list_projects(self) -> list[str]:
        """Every project key with an entry, sorted (finding a session id in any project)."""
        # A loose index scan: one index probe per project rather than reading every row
        # (PostgreSQL has no skip scan for DISTINCT).
        query = sql.SQL(
            "WITH RECURSIVE p(k) AS ("
            "(SELECT project_key FROM {t} ORDER BY project_key LIMIT 1) UNION ALL "
            "SELECT (SELECT project_key FROM {t} WHERE project_key > p.k "
            "ORDER BY project_key LIMIT 1) FROM p WHERE p.k IS NOT NULL) "
            "SELECT k FROM p WHERE k IS NOT NULL"
        ).format(t=self._table)

        def read(conn: psycopg.Connection[Any]) -> list[str]:
            with conn.cursor() as cur:
                cur.execute(query)
                return [str(row[0]) for row in cur.fetchall()]

        return self._run(read)

    def describe(self, key: SessionKey) -> str:
        """Where the transcript is, for a person (the DSN without its password)."""
        sub = subpath_of(key)
        where = f"{redact_dsn(self.dsn)} table {self.table} session {key['session_id']}"
        return where + (f" {sub}" if sub else "")

    # ---- connection -----------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (a later call opens a new one)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self) -> PostgresSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def _table(self) -> sql.Identifier:
        return sql.Identifier(self.table)

    def _run(
        self,
        action: Callable[[psycopg.Connection[Any]], _T],
        retry: Callable[[psycopg.Connection[Any]], _T] | None = None,
    ) -> _T:
        """`action` on the connection, under the lock; once more (`retry`, if given) on a
        new connection when the connection was lost. The server's errors become
        `SessionError`s naming the store."""
        with self._lock:
            conn = self._connection()
            try:
                return action(conn)
            except psycopg.Error as exc:
                if not conn.broken and not conn.closed:
                    raise self._error(exc) from exc  # the server refused: not a lost line
                self._conn = None
            conn = self._connection()
            try:
                return (retry or action)(conn)
            except psycopg.Error as exc:
                if conn.broken or conn.closed:
                    self._conn = None
                    raise SessionStoreUnavailableError(
                        f"lost the PostgreSQL session store at {redact_dsn(self.dsn)} twice: "
                        f"{_first_line(exc)}"
                    ) from exc
                raise self._error(exc) from exc

    def _error(self, exc: psycopg.Error) -> SessionError:
        return SessionError(
            f"the PostgreSQL session store at {redact_dsn(self.dsn)} (table {self.table}): "
            f"{_first_line(exc)}"
        )

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn
        self._conn = None
        try:
            conn = psycopg.connect(self.dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S)
        except psycopg.Error as exc:
            raise SessionStoreUnavailableError(
                f"cannot reach the PostgreSQL session store at {redact_dsn(self.dsn)}: "
                f"{_first_line(exc)}"
            ) from exc
        try:
            # A server (or role) may default to asynchronous commit; a transcript entry must
            # be on disk when `append` returns.
            conn.execute("SET synchronous_commit = on")
            if not self._schema_ready:
                self._create_schema(conn)
                self._schema_ready = True
        except psycopg.Error as exc:
            conn.close()
            raise self._error(exc) from exc
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return conn

    def _create_schema(self, conn: psycopg.Connection[Any]) -> None:
        """The table and its key index, if missing. Looked up first: CREATE TABLE IF NOT
        EXISTS needs the CREATE privilege even when the table is there, and a role may have
        only SELECT, INSERT and DELETE on a table its owner made. CREATE ... IF NOT EXISTS
        alone also races (two sessions creating the same table at once: a unique violation
        in pg_type), so creators take a transaction-scoped advisory lock on the name first."""
        table = self._table
        index = sql.Identifier(f"{self.table}_key_idx")
        with conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT to_regclass(%s) IS NOT NULL", (table.as_string(conn),))
            found = cur.fetchone()
            if found and found[0]:
                return
            cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.table,))
            cur.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} ("
                    "id bigserial PRIMARY KEY, "
                    "project_key text NOT NULL, "
                    "session_id text NOT NULL, "
                    "subpath text NOT NULL DEFAULT '', "
                    "append_id uuid, "
                    "entry jsonb NOT NULL, "
                    "created_at timestamptz NOT NULL DEFAULT now())"
                ).format(table)
            )
            cur.execute(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS {} ON {} (project_key, session_id, subpath, id)"
                ).format(index, table)
            )

    def _appended(
        self, conn: psycopg.Connection[Any], key: SessionKey, append_id: uuid.UUID
    ) -> bool:
        query = sql.SQL(
            "SELECT EXISTS (SELECT 1 FROM {} WHERE project_key = %s AND session_id = %s "
            "AND subpath = %s AND append_id = %s)"
        ).format(self._table)
        with conn.cursor() as cur:
            cur.execute(query, (*_key(key), append_id))
            row = cur.fetchone()
        return bool(row and row[0])


def _key(key: SessionKey) -> tuple[str, str, str]:
    return key["project_key"], key["session_id"], subpath_of(key)


def _encode(entry: SessionStoreEntry) -> Jsonb:
    try:
        text = json.dumps(entry, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise SessionError(f"a session entry is not JSON: {exc}") from exc
    if "\\u0000" in text:
        return Jsonb({_NUL_WRAPPER: text})
    return Jsonb(entry)


def _decode(value: Any) -> SessionStoreEntry:
    if isinstance(value, dict) and len(value) == 1 and _NUL_WRAPPER in value:
        decoded: SessionStoreEntry = json.loads(value[_NUL_WRAPPER])
        return decoded
    entry: SessionStoreEntry = value
    return entry


def redact_dsn(dsn: str) -> str:
    """`dsn` (a URL or `key=value` string) without its password, for messages."""
    if "://" in dsn:
        parts = urlsplit(dsn)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hosts = netloc.rpartition("@")
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:***@{hosts}" if ":" in userinfo else f"{user}@{hosts}"
        query = re.sub(r"(?i)(^|&)password=[^&]*", r"\1password=***", parts.query)
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<an unparsable DSN>"
    if "password" in params:
        params["password"] = "***"
    return make_conninfo("", **{k: v for k, v in params.items() if v is not None})


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
