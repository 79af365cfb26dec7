"""Checkpoints: what files looked like before each user prompt changed them.

At each user prompt a checkpoint begins. The first time Write, Edit or MultiEdit is about to
touch a file during that prompt, the file's current bytes (or the fact that it does not
exist yet) are saved. Restoring checkpoint k puts every file changed at or after prompt k
back as it was before prompt k (a file that did not exist is deleted).

Stored beside the transcript, in `<session folder>/checkpoints/`: an append-only
`index.ndjson` (one record per checkpoint and per saved file) and content-addressed `blobs/`
(identical snapshots are stored once). Bounded: at most `max_checkpoints` (100, like Claude
Code) and `max_total_bytes` of blobs (oldest checkpoints go first); a file larger than
`max_file_bytes` is recorded as not restorable instead of copied.

Changes made through Bash (or by anything outside these three tools) are NOT tracked.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..messages.types import now_iso

TRACKED_TOOLS = frozenset({"Write", "Edit", "MultiEdit"})
DEFAULT_MAX_CHECKPOINTS = 100
DEFAULT_MAX_FILE_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_TOTAL_BYTES = 200 * 1024 * 1024
PROMPT_PREVIEW_CHARS = 200


@dataclass(frozen=True, slots=True)
class FileSnapshot:
    """A file as it was before a prompt first changed it. `blob` None: it did not exist."""

    path: str
    blob: str | None
    size: int = 0
    too_large: bool = False


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One user prompt: its number in the session (1-based), message uuid, text, files."""

    number: int
    prompt_uuid: str
    prompt: str
    timestamp: str
    files: tuple[FileSnapshot, ...] = ()

    @property
    def changed_paths(self) -> list[str]:
        """The files Write/Edit/MultiEdit changed during this prompt."""
        return [f.path for f in self.files]


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What restoring code did."""

    restored: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    """Files that could not be restored (too large to snapshot, or an OS error)."""


@dataclass
class CheckpointStore:
    """The checkpoints of one session. `folder` None keeps them in memory only (no files
    are copied then, so code cannot be restored: `persist=False` sessions)."""

    folder: Path | None
    max_checkpoints: int = DEFAULT_MAX_CHECKPOINTS
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES
    _checkpoints: list[Checkpoint] = field(default_factory=list)
    _loaded: bool = False

    def switch(self, folder: Path | None) -> None:
        """Use another session's folder (after /clear started a new session)."""
        self.folder = folder
        self._checkpoints = []
        self._loaded = False

    # ---- reading --------------------------------------------------------------------------

    def checkpoints(self) -> list[Checkpoint]:
        """Every kept checkpoint, oldest first."""
        self._load()
        return list(self._checkpoints)

    def find(self, ref: int | str) -> Checkpoint | None:
        """A checkpoint by prompt number or prompt message uuid."""
        for checkpoint in self.checkpoints():
            if ref in (checkpoint.number, checkpoint.prompt_uuid):
                return checkpoint
        return None

    # ---- recording ------------------------------------------------------------------------

    def begin(self, prompt_uuid: str, prompt: str) -> Checkpoint:
        """A new checkpoint for the user prompt about to run."""
        self._load()
        number = self._checkpoints[-1].number + 1 if self._checkpoints else 1
        checkpoint = Checkpoint(number, prompt_uuid, prompt[:PROMPT_PREVIEW_CHARS], now_iso())
        self._checkpoints.append(checkpoint)
        self._append({"kind": "checkpoint", "number": number, "prompt_uuid": prompt_uuid,
                      "prompt": checkpoint.prompt, "timestamp": checkpoint.timestamp})  # fmt: skip
        self._prune()
        return checkpoint

    def before_change(self, path: Path) -> None:
        """Save `path` as it is now, unless the current checkpoint already has it."""
        self._load()
        if not self._checkpoints:
            return
        current = self._checkpoints[-1]
        key = str(path)
        if any(f.path == key for f in current.files):
            return
        snapshot = self._snapshot(path)
        self._checkpoints[-1] = replace(current, files=(*current.files, snapshot))
        self._append({"kind": "file", "number": current.number, "path": key,
                      "blob": snapshot.blob, "size": snapshot.size,
                      "too_large": snapshot.too_large})  # fmt: skip

    # ---- restoring ------------------------------------------------------------------------

    def restore_code(self, checkpoint: Checkpoint) -> RestoreReport:
        """Every file changed at or after `checkpoint`, back to before it."""
        earliest: dict[str, FileSnapshot] = {}
        for later in self.checkpoints():
            if later.number < checkpoint.number:
                continue
            for snapshot in later.files:
                earliest.setdefault(snapshot.path, snapshot)
        restored: list[str] = []
        deleted: list[str] = []
        skipped: list[str] = []
        for path, snapshot in sorted(earliest.items()):
            try:
                outcome = self._restore_file(snapshot)
            except OSError:
                outcome = "skipped"
            {"restored": restored, "deleted": deleted, "skipped": skipped}[outcome].append(path)
        return RestoreReport(tuple(restored), tuple(deleted), tuple(skipped))

    def drop_from(self, checkpoint: Checkpoint) -> None:
        """Forget `checkpoint` and every later one (the conversation was rewound before it)."""
        self._load()
        self._checkpoints = [c for c in self._checkpoints if c.number < checkpoint.number]
        self._append({"kind": "drop_from", "number": checkpoint.number})

    # ---- internals ------------------------------------------------------------------------

    def _snapshot(self, path: Path) -> FileSnapshot:
        key = str(path)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return FileSnapshot(key, None)
        if size > self.max_file_bytes or self.folder is None:
            return FileSnapshot(key, None, size, too_large=True)
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        blob = self._blobs() / digest
        if not blob.exists():
            blob.parent.mkdir(parents=True, exist_ok=True)
            tmp = blob.with_suffix(".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, blob)
        return FileSnapshot(key, digest, len(data))

    def _restore_file(self, snapshot: FileSnapshot) -> str:
        path = Path(snapshot.path)
        if snapshot.too_large:
            return "skipped"
        if snapshot.blob is None:
            if path.exists():
                path.unlink()
                return "deleted"
            return "restored"
        data = (self._blobs() / snapshot.blob).read_bytes()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return "restored"

    def _prune(self) -> None:
        """Keep at most `max_checkpoints`, and blobs within `max_total_bytes`."""
        while len(self._checkpoints) > self.max_checkpoints:
            self._forget_oldest()
        while len(self._checkpoints) > 1 and self._blob_bytes() > self.max_total_bytes:
            self._forget_oldest()

    def _forget_oldest(self) -> None:
        oldest = self._checkpoints.pop(0)
        self._append({"kind": "forget", "number": oldest.number})
        still_used = {f.blob for c in self._checkpoints for f in c.files if f.blob}
        for snapshot in oldest.files:
            if snapshot.blob and snapshot.blob not in still_used:
                (self._blobs() / snapshot.blob).unlink(missing_ok=True)

    def _blob_bytes(self) -> int:
        """Bytes of the blobs the kept checkpoints use (from the index: no disk scan)."""
        sizes = {f.blob: f.size for c in self._checkpoints for f in c.files if f.blob}
        return sum(sizes.values())

    def _blobs(self) -> Path:
        return (self.folder or Path(".")) / "blobs"

    def _append(self, record: dict[str, Any]) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        with (self.folder / "index.ndjson").open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.folder is None:
            return
        index = self.folder / "index.ndjson"
        if index.is_file():
            self._checkpoints = replay(_records(index.read_text(encoding="utf-8").splitlines()))


def replay(records: Iterable[dict[str, Any]]) -> list[Checkpoint]:
    """The checkpoints an index's records leave (skipping records it does not know)."""
    kept: list[Checkpoint] = []
    for r in records:
        kind = r.get("kind")
        if kind == "checkpoint":
            kept.append(Checkpoint(int(r["number"]), str(r["prompt_uuid"]), str(r["prompt"]),
                                   str(r.get("timestamp", ""))))  # fmt: skip
        elif kind == "file" and kept and kept[-1].number == r.get("number"):
            snapshot = FileSnapshot(str(r["path"]), r.get("blob"), int(r.get("size", 0)),
                                    bool(r.get("too_large")))  # fmt: skip
            kept[-1] = replace(kept[-1], files=(*kept[-1].files, snapshot))
        elif kind == "forget":
            kept = [c for c in kept if c.number != r.get("number")]
        elif kind == "drop_from":
            kept = [c for c in kept if c.number < int(r.get("number", 0))]
    return kept


def _records(lines: Sequence[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a record cut short by a crash
        if isinstance(record, dict):
            out.append(record)
    return out
