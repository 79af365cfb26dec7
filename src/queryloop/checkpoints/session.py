"""Checkpoints of a stored session: where they live, and rewinding without a running Agent
(the headless `queryloop rewind`)."""

from __future__ import annotations

from pathlib import Path

from .rewind import RewindMode, RewindOutcome, rewind, tombstones_for
from .store import CheckpointStore


def checkpoint_folder(session_dir: Path) -> Path:
    """`<projects>/<key>/<session-id>/checkpoints`: beside the transcript, in the session's
    own folder (where spilled tool results live too)."""
    return session_dir / "checkpoints"


def store_for_transcript(path: Path, session_id: str) -> CheckpointStore:
    """The checkpoint store of the transcript at `path`."""
    return CheckpointStore(checkpoint_folder(path.parent / session_id))


def rewind_transcript(
    path: Path, ref: int | str | None, mode: RewindMode = RewindMode.BOTH
) -> tuple[CheckpointStore, RewindOutcome | None]:
    """Rewind a stored session in place (`ref` None: only list). Removed messages are voided
    by tombstones appended to the transcript, so `--resume` continues from the rewind."""
    from ..session import load_transcript

    loaded = load_transcript(path)
    store = store_for_transcript(path, loaded.session_id)
    if ref is None:
        return store, None
    outcome = rewind(store, loaded.messages, ref, mode)
    if outcome.removed:
        writer = loaded.open_transcript(fsync=True)
        try:
            for stone in tombstones_for(outcome.removed):
                writer.append(stone)
        finally:
            writer.close()
    return store, outcome
