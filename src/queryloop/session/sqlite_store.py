"""`SqliteSessionStore`: every transcript in one SQLite file (the standard library's `sqlite3`).

One row per entry, ordered by an autoincrement id:

    entries(id INTEGER PRIMARY KEY AUTOINCREMENT, project_key, session_id, subpath,
            entry TEXT (the record's JSON), mtime INTEGER (ms since the epoch))

Durability: the database is in WAL mode with `synchronous=NORMAL`. Each `append` is one
committed transaction, and SQLite's rule for WAL is that a committed transaction survives an
application crash whatever `synchronous` says (https://www.sqlite.org/pragma.html#pragma_synchronous):
the commit has been written to the `-wal` file with `write()` before `commit` returns, so a
kill -9 loses nothing, as with the JSONL files' unsynced appends. Only an OS crash or power
loss can roll back the last commits; `sync()` (the end of each prompt) runs a WAL checkpoint,
which fsyncs, just as the JSONL store fsyncs there. `synchronous=FULL` would fsync every
message, which costs milliseconds each (docs/sessions.md).

Several processes may share the file: WAL lets readers run beside the one writer, a writer
waits up to `busy_timeout` for another's transaction, and `BEGIN IMMEDIATE` takes the write
lock before reading anything, so two appends never interleave inside a transaction.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path

from .jsonl_store import now_ms
from .store_api import (
    MAIN_SUBPATH,
    SessionKey,
    SessionListSubkeysKey,
    SessionStoreEntry,
    SessionStoreListEntry,
    subpath_of,
)

BUSY_TIMEOUT_S = 30.0
"""How long a write waits for another process's transaction before it fails."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    subpath TEXT NOT NULL DEFAULT '',
    entry TEXT NOT NULL,
    mtime INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_key ON entries (project_key, session_id, subpath, id);
"""


class SqliteSessionStore:
    """Sessions in the SQLite database at `path` (created with its folder if missing)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # One connection per store, shared by the threads of this process under a lock (the
        # SDK adapter's loop thread and the agent's); autocommit, transactions by hand.
        self._db = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)

    def describe(self, key: SessionKey) -> str:
        """Where the transcript is, for a person."""
        sub = subpath_of(key)
        return f"sqlite:///{self.path}#{key['session_id']}" + (f"/{sub}" if sub else "")

    def append(self, key: SessionKey, entries: Sequence[SessionStoreEntry]) -> None:
        """Insert the entries in one committed transaction (see the module docstring)."""
        if not entries:
            return
        stamp = now_ms()
        rows = [
            (key["project_key"], key["session_id"], subpath_of(key), _text(e), stamp)
            for e in entries
        ]
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT INTO entries (project_key, session_id, subpath, entry, mtime) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The entries in the order appended; None when the transcript has none."""
        with self._lock:
            rows = self._db.execute(
                "SELECT entry FROM entries WHERE project_key = ? AND session_id = ? "
                "AND subpath = ? ORDER BY id",
                (key["project_key"], key["session_id"], subpath_of(key)),
            ).fetchall()
        if not rows:
            return None
        return [json.loads(row[0]) for row in rows]

    def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The project's sessions, the one written to last first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT session_id, MAX(mtime), MAX(id) AS last FROM entries "
                "WHERE project_key = ? AND subpath = ? GROUP BY session_id ORDER BY last DESC",
                (project_key, MAIN_SUBPATH),
            ).fetchall()
        return [SessionStoreListEntry(session_id=row[0], mtime=int(row[1])) for row in rows]

    def delete(self, key: SessionKey) -> None:
        """Remove a transcript; a main key removes its subkeys too."""
        where = "project_key = ? AND session_id = ?"
        args: tuple[str, ...] = (key["project_key"], key["session_id"])
        if subpath_of(key) != MAIN_SUBPATH:
            where, args = where + " AND subpath = ?", (*args, subpath_of(key))
        with self._lock:
            self._db.execute(f"DELETE FROM entries WHERE {where}", args)

    def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The session's subpaths, sorted."""
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT subpath FROM entries WHERE project_key = ? AND session_id = ? "
                "AND subpath != ? ORDER BY subpath",
                (key["project_key"], key["session_id"], MAIN_SUBPATH),
            ).fetchall()
        return [row[0] for row in rows]

    # ---- beyond the protocol -------------------------------------------------------------

    def list_projects(self) -> list[str]:
        """Every project key with a session."""
        with self._lock:
            rows = self._db.execute(
                "SELECT DISTINCT project_key FROM entries ORDER BY project_key"
            ).fetchall()
        return [row[0] for row in rows]

    def sync(self, key: SessionKey) -> None:
        """Checkpoint the WAL (it fsyncs): what was appended survives an OS crash too."""
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def release(self, key: SessionKey) -> None:
        """Nothing is held per transcript."""

    def close(self) -> None:
        """Close the connection (every append is already committed)."""
        with self._lock:
            self._db.close()


def _text(entry: SessionStoreEntry) -> str:
    # default=str, as the JSONL store: a stray Path in metadata is kept as text.
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)
