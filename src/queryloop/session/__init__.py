"""Durable sessions: append-only JSONL transcripts, tolerant loading with repair, listing.

writer = Transcript(session_path(new_session_id(), cwd))
writer.append(message)                 # one line, fsynced before it returns
loaded = load_transcript(writer.path)  # LoadedSession(messages, session_id, ...)
live = Session(session_id, transcript=writer)   # the one owner of a live conversation
"""

from typing import TYPE_CHECKING, Any

from .listing import SessionSummary, list_sessions
from .repair import INTERRUPTED_TOOL_RESULT, LoadedSession, load_transcript
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
    "AmbiguousSessionError",
    "LoadedSession",
    "MeteredProvider",
    "RequestKind",
    "Session",
    "SessionError",
    "SessionNotFoundError",
    "SessionSummary",
    "SessionTotals",
    "Transcript",
    "UsageRecord",
    "UsageSink",
    "find_session",
    "latest_session",
    "list_sessions",
    "load_transcript",
    "model_table_price",
    "new_session_id",
    "project_dir",
    "project_key",
    "queryloop_home",
    "session_path",
]
