"""Subagent transcripts: one sidechain JSONL per subagent, beside the session's own.

Layout (Claude Code's): `<project>/<session-id>/subagents/agent-<agent-id>.jsonl`. The first
record is a `meta` record linking it to its parent: `sidechain: true`, `agent_id`,
`agent_type`, `parent_session_id`, `parent_tool_use_id`, `depth`, `description`. Every
message is appended as it is created (kill -9 safe, like the main transcript), with `usage`
records per response and `timing` records (the session report's lane for the subagent);
`Agent` with `resume: <agent-id>` continues it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import QueryloopError
from ..session import LoadedSession, Transcript, load_transcript
from ..session.store import SUBAGENTS_DIR, sidechain_agent_id, sidechain_path, sidechain_paths

__all__ = [
    "SUBAGENTS_DIR",
    "find_sidechains",
    "load_sidechain",
    "open_sidechain",
    "sidechain_path",
]


def open_sidechain(
    folder: Path | None, agent_id: str, meta: dict[str, Any], *, resumed: LoadedSession | None
) -> Transcript | None:
    """A writer for the subagent's transcript (None without a folder); new ones get `meta`."""
    if folder is None:
        return None
    if resumed is not None:
        return resumed.open_transcript(fsync=False)
    transcript = Transcript(sidechain_path(folder, agent_id), agent_id, fsync=False)
    transcript.start(sidechain=True, **meta)
    return transcript


def load_sidechain(folder: Path | None, agent_id: str) -> LoadedSession:
    """A subagent's transcript, repaired, to resume it; QueryloopError when there is none."""
    if folder is None:
        raise QueryloopError("this session keeps no subagent transcripts (persist is off)")
    path = sidechain_path(folder, agent_id)
    if not path.is_file():
        known = sorted(sidechain_agent_id(p) for p in sidechain_paths(folder))
        names = ", ".join(known) or "none"
        raise QueryloopError(f"no subagent {agent_id!r} to resume in this session (known: {names})")
    return load_transcript(path)


def find_sidechains(folder: Path | None, tool_use_id: str) -> list[LoadedSession]:
    """The subagent transcripts started by one tool call of the parent (resume after a crash)."""
    if folder is None or not folder.is_dir():
        return []
    found: list[LoadedSession] = []
    for path in sidechain_paths(folder):
        loaded = load_transcript(path, repair=False)
        if loaded.metadata.get("parent_tool_use_id") == tool_use_id:
            found.append(loaded)
    return found
