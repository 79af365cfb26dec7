"""The `SessionStore` protocol: where a session's records live, as data.

The shape is the Claude Agent SDK's (`append`, `load`, `list_sessions`, `delete`,
`list_subkeys`, addressed by a `SessionKey` of project key, session id and an optional
`subpath` such as `subagents/agent-<id>` for a subagent's transcript), so a store written for
one fits the other. Entries are the transcript's records (`transcript.py`: one JSON-safe
object each, `{"record": "message", ...}`), kept in order; `load` returns them deeply equal
to what was appended (a backend may reorder object keys, as PostgreSQL's `jsonb` does).

Unlike the SDK's protocol, these methods are synchronous: the live session writes a record
and makes it durable before the loop takes its next step (a kill -9 loses nothing), as the
JSONL transcript always has. `queryloop.claude_agent_sdk` adapts the SDK's async stores.

Stores: `JsonlSessionStore` (the files under `$QUERYLOOP_HOME/projects/`, the default and
unchanged on disk), `SqliteSessionStore` (one file), `PostgresSessionStore` (psycopg 3);
`open_session_store(url)` picks one from `sqlite:///path`, `postgresql://...` or a folder
(`stores.py`, which also lists the optional extras a store may offer: `list_projects`,
`sync`/`release`, `load_checked`, `describe`, `close`). Every store passes the conformance
suite in `tests/session/store_conformance.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NotRequired, Protocol, TypeAlias, TypedDict, runtime_checkable

SessionStoreEntry: TypeAlias = dict[str, Any]
"""One transcript record: a JSON-safe object with a `record` kind (`transcript.py`)."""

MAIN_SUBPATH = ""
"""The main transcript's subpath: a key without `subpath`, stored as the empty string."""


class SessionKey(TypedDict):
    """Addresses one transcript: the session's main one, or a subkey of it (`subpath`)."""

    project_key: str
    """`store.project_key(cwd)`: the working folder as a file-name-safe string."""
    session_id: str
    subpath: NotRequired[str]
    """Absent (or empty) for the main transcript; `subagents/agent-<id>` for a subagent's."""


class SessionListSubkeysKey(TypedDict):
    """Addresses a session, to list its subkeys."""

    project_key: str
    session_id: str


class SessionStoreListEntry(TypedDict):
    """One session of a project, as `list_sessions` reports it."""

    session_id: str
    mtime: int
    """When it was last appended to, in milliseconds since the epoch."""


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions are kept. Every method is safe to call from several processes at once
    on the same backend (separate sessions; one session has one writer at a time)."""

    def append(self, key: SessionKey, entries: Sequence[SessionStoreEntry]) -> None:
        """Add `entries`, in order, after what the transcript holds; durable on return."""
        ...

    def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Every entry of the transcript in the order appended; None if there is none."""
        ...

    def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The sessions of a project (main transcripts only), newest first."""
        ...

    def delete(self, key: SessionKey) -> None:
        """Remove a transcript; a main key (no subpath) removes its subkeys too."""
        ...

    def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths a session holds besides its main transcript, sorted."""
        ...


def subpath_of(key: SessionKey) -> str:
    """The key's subpath, `MAIN_SUBPATH` for the main transcript."""
    return key.get("subpath") or MAIN_SUBPATH
