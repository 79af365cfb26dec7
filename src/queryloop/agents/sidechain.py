"""Subagent transcripts: one sidechain per subagent, a subkey of the session's transcript.

The subkey is `subagents/agent-<agent-id>` of the session's key, in the session's store; with
the JSONL files that is Claude Code's layout, `<project>/<session-id>/subagents/agent-<id>.jsonl`.
The first record is a `meta` record linking it to its parent: `sidechain: true`,
`agent_id`, `agent_type`, `parent_session_id`, `parent_tool_use_id`, `depth`,
`description`. Every message is appended as it is created (kill -9 safe, like the main
transcript), with `usage` records per response and `timing` records (the session report's
lane for the subagent); `Agent` with `resume: <agent-id>` continues it.
"""

from __future__ import annotations

from typing import Any

from ..errors import QueryloopError
from ..session import LoadedSession, Transcript, load_transcript
from ..session.store import SUBAGENTS_DIR, sidechain_path
from ..session.stores import TranscriptRef, sidechain_agent_ids, sidechain_subpath

__all__ = [
    "SUBAGENTS_DIR",
    "find_sidechains",
    "load_sidechain",
    "open_sidechain",
    "sidechain_agent_ids",
    "sidechain_path",
    "sidechain_subpath",
]


def open_sidechain(
    session: TranscriptRef | None,
    agent_id: str,
    meta: dict[str, Any],
    *,
    resumed: LoadedSession | None,
) -> Transcript | None:
    """A writer for the subagent's transcript (None when the session keeps none); new ones
    get `meta`."""
    if session is None:
        return None
    if resumed is not None:
        return resumed.open_transcript()
    transcript = Transcript(session.sub(sidechain_subpath(agent_id)), agent_id)
    transcript.start(sidechain=True, **meta)
    return transcript


def load_sidechain(session: TranscriptRef | None, agent_id: str) -> LoadedSession:
    """A subagent's transcript, repaired, to resume it; QueryloopError when there is none."""
    if session is None:
        raise QueryloopError("this session keeps no subagent transcripts (persist is off)")
    ref = session.sub(sidechain_subpath(agent_id))
    if not ref.exists():
        names = ", ".join(sidechain_agent_ids(session)) or "none"
        raise QueryloopError(f"no subagent {agent_id!r} to resume in this session (known: {names})")
    return load_transcript(ref)


def find_sidechains(session: TranscriptRef | None, tool_use_id: str) -> list[LoadedSession]:
    """The subagent transcripts started by one tool call of the parent (resume after a crash)."""
    if session is None:
        return []
    found: list[LoadedSession] = []
    for agent_id in sidechain_agent_ids(session):
        loaded = load_transcript(session.sub(sidechain_subpath(agent_id)), repair=False)
        if loaded.metadata.get("parent_tool_use_id") == tool_use_id:
            found.append(loaded)
    return found
