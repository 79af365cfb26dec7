"""Checkpoints of a stored session: where they live, and rewinding without a running Agent
(the headless `queryloop rewind`)."""

from __future__ import annotations

from pathlib import Path

from ..session.stores import TranscriptRef, as_ref, session_folder
from .rewind import RewindMode, RewindOutcome, rewind, tombstones_for
from .store import CheckpointStore


def checkpoint_folder(session_dir: Path) -> Path:
    """`<projects>/<key>/<session-id>/checkpoints`: beside the transcript, in the session's
    own folder (where spilled tool results live too)."""
    return session_dir / "checkpoints"


def store_for_transcript(
    transcript: TranscriptRef | Path, home: Path | None = None
) -> CheckpointStore:
    """The checkpoint store of a session (a transcript in a store, or a `.jsonl` file), in
    the session's folder (`session.stores.session_folder`)."""
    return CheckpointStore(checkpoint_folder(session_folder(as_ref(transcript), home)))


def rewind_transcript(
    transcript: TranscriptRef | Path,
    ref: int | str | None,
    mode: RewindMode = RewindMode.BOTH,
    *,
    home: Path | None = None,
) -> tuple[CheckpointStore, RewindOutcome | None]:
    """Rewind a stored session in place (`ref` None: only list). Removed messages are voided
    by tombstones appended to the transcript, so `--resume` continues from the rewind."""
    from ..session import load_transcript

    loaded = load_transcript(transcript)
    assert loaded.ref is not None  # it was loaded from a store
    store = store_for_transcript(loaded.ref, home)
    if ref is None:
        return store, None
    outcome = rewind(store, loaded.messages, ref, mode)
    if outcome.removed:
        writer = loaded.open_transcript()
        try:
            for stone in tombstones_for(outcome.removed):
                writer.append(stone)
            writer.sync()
        finally:
            writer.close()
    return store, outcome
