"""Durable sessions: append-only transcripts in a session store, tolerant loading with
repair, listing.

store = open_session_store("sqlite:///var/ql/sessions.db")   # None: the JSONL files
writer = Transcript(TranscriptRef.of(store, project_key(cwd), new_session_id()))
writer.append(message)                 # in the store before it returns
loaded = load_transcript(writer.ref)   # LoadedSession(messages, session_id, ...)
live = Session(session_id, transcript=writer)   # the one owner of a live conversation

`Transcript(path)` and `load_transcript(path)` still take a `.jsonl` file's path.
"""

from typing import TYPE_CHECKING, Any

from .jsonl_store import JsonlSessionStore
from .listing import SessionSummary, list_sessions
from .memory_store import InMemorySessionStore
from .repair import INTERRUPTED_TOOL_RESULT, LoadedSession, load_transcript
from .sqlite_store import SqliteSessionStore
from .store import (
    AmbiguousSessionError,
    SessionError,
    SessionNotFoundError,
    find_session,
    latest_session,
    new_session_id,
    project_dir,
    project_key,
    queryloop_home,
    session_path,
)
from .store_api import SessionKey, SessionStore
from .stores import SESSION_STORE_ENV, TranscriptRef, open_session_store
from .transcript import FORMAT_VERSION, Transcript

if TYPE_CHECKING:
    from .live import (
        MeteredProvider,
        RequestKind,
        Session,
        SessionTotals,
        UsageRecord,
        UsageSink,
        model_table_price,
    )

_LIVE = frozenset(
    {"MeteredProvider", "RequestKind", "Session", "SessionTotals", "UsageRecord", "UsageSink"}
    | {"model_table_price"}
)


def __getattr__(name: str) -> Any:
    # The live session needs the loop's event types (and so the loop package): loaded on
    # first use, so that `queryloop sessions` and transcript tools stay light.
    if name in _LIVE:
        from . import live

        return getattr(live, name)
    raise AttributeError(f"module 'queryloop.session' has no attribute {name!r}")


__all__ = [
    "FORMAT_VERSION",
    "INTERRUPTED_TOOL_RESULT",
    "SESSION_STORE_ENV",
    "AmbiguousSessionError",
    "InMemorySessionStore",
    "JsonlSessionStore",
    "LoadedSession",
    "MeteredProvider",
    "RequestKind",
    "Session",
    "SessionError",
    "SessionKey",
    "SessionNotFoundError",
    "SessionStore",
    "SessionSummary",
    "SessionTotals",
    "SqliteSessionStore",
    "Transcript",
    "TranscriptRef",
    "UsageRecord",
    "UsageSink",
    "find_session",
    "latest_session",
    "list_sessions",
    "load_transcript",
    "model_table_price",
    "new_session_id",
    "open_session_store",
    "project_dir",
    "project_key",
    "queryloop_home",
    "session_path",
]
