"""Checkpoints and rewind: files as they were before each prompt, restorable with the
conversation (`/rewind`, `Agent.rewind()`, `queryloop rewind`). Bash changes are not tracked."""

from .rewind import (
    BASH_NOTE,
    CheckpointingHooks,
    RewindError,
    RewindMode,
    RewindOutcome,
    describe,
    rewind,
    tombstones_for,
)
from .session import checkpoint_folder, rewind_transcript
from .store import Checkpoint, CheckpointStore, FileSnapshot, RestoreReport

__all__ = [
    "BASH_NOTE",
    "Checkpoint",
    "CheckpointStore",
    "CheckpointingHooks",
    "FileSnapshot",
    "RestoreReport",
    "RewindError",
    "RewindMode",
    "RewindOutcome",
    "checkpoint_folder",
    "describe",
    "rewind",
    "rewind_transcript",
    "tombstones_for",
]
