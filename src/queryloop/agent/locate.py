"""Finding the stored session an Agent resumes, in the store its options choose.

`Agent.resume` and `Agent.continue_latest` run before the session's workspace is read, so
the store is chosen here from the options, the environment and the settings files
(`config.session_store`); the runtime then writes to the same store, and closes it when the
session ends if it was opened from a spec.
"""

from __future__ import annotations

from pathlib import Path

from ..config.discovery import SettingSources
from ..config.session_store import open_configured_store
from ..session.store import TRANSCRIPT_SUFFIX, queryloop_home
from ..session.store_api import SessionStore
from ..session.stores import TranscriptRef, close_store, find_transcript, latest_transcript
from .options import AgentOptions


def options_store(options: AgentOptions) -> tuple[SessionStore, bool]:
    """The store the options choose, and whether it was opened here (a spec, or nothing)."""
    return open_configured_store(
        options.session.session_store,
        options.workspace.cwd,
        queryloop_home(options.session.home),
        trust=options.workspace.trust,
        sources=SettingSources.of(options.workspace.setting_sources),
    )


def locate_session(options: AgentOptions, session: str) -> TranscriptRef:
    """The transcript of `session`: a `.jsonl` file's path, else an id or unique id prefix
    in the chosen store (this project first). Raises `SessionNotFoundError` or
    `AmbiguousSessionError`."""
    path = Path(session).expanduser()
    if path.suffix == TRANSCRIPT_SUFFIX and path.is_file():
        return TranscriptRef.for_file(path, fsync=False)  # fsynced per prompt, as new ones
    store, opened = options_store(options)
    try:
        return find_transcript(store, session, options.workspace.cwd)
    except BaseException:
        if opened:
            close_store(store)
        raise


def locate_latest(options: AgentOptions) -> TranscriptRef | None:
    """The most recently written session of the options' project, None when there is none."""
    store, opened = options_store(options)
    found = latest_transcript(store, options.workspace.cwd)
    if found is None and opened:
        close_store(store)
    return found
