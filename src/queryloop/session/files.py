"""What the agent has seen of files, kept across a resume.

Edit and Write refuse a file the agent has not read (or written) in this session, or that
changed on disk since (`ToolContext.read_files`). Without this, `--continue` forgot it: writing
a file the agent itself wrote a minute ago failed with "File has not been read yet".

So the session owns that record (`Session.read_files`; the main thread's tool context holds
the same dict) and writes what changed to the transcript after each tool result, as a `files`
record:

    {"record": "files", "session_id", "timestamp", "read": {path: {"mtime_ns", "size", "partial"}}}

Loading collects the latest entry per path (`LoadedSession.read_files`), and `restore_read_state`
keeps the entries whose file is still exactly as the agent saw it (same mtime and size); a file
changed on disk since is left out, so the agent reads it again before it edits it. The text of
a kept file is its `FileTextSnapshot` (the file is unchanged, so it is what the agent saw), so
a later change to it is announced as a diff.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..messages.types import now_iso

if TYPE_CHECKING:
    # Imported where used: loading a transcript (`queryloop sessions`) must stay light.
    from ..tools.base import FileReadRecord
    from ..tools.services import FileTextSnapshot

FILES_RECORD = "files"
MAX_SNAPSHOT_BYTES = 512 * 1024
"""Larger files get no snapshot (as `context.providers.files` does not diff them)."""


@dataclass(frozen=True, slots=True)
class SeenFile:
    """One recorded read-state entry: the version of a file the agent last saw."""

    mtime_ns: int
    size: int
    partial: bool = False

    @classmethod
    def of(cls, record: Any) -> SeenFile:
        """From a `FileReadRecord` (anything with the three fields)."""
        return cls(int(record.mtime_ns), int(record.size), bool(record.partial))


def files_record(session_id: str, changed: Mapping[str, SeenFile]) -> dict[str, Any]:
    """The `files` record for the read-state entries in `changed`."""
    return {
        "record": FILES_RECORD,
        "session_id": session_id,
        "timestamp": now_iso(),
        "read": {
            path: {"mtime_ns": r.mtime_ns, "size": r.size, "partial": r.partial}
            for path, r in changed.items()
        },
    }


def read_entries(record: Mapping[str, Any]) -> dict[str, SeenFile]:
    """The entries of one `files` record (malformed ones are skipped)."""
    out: dict[str, SeenFile] = {}
    read = record.get("read")
    if not isinstance(read, Mapping):
        return out
    for path, entry in read.items():
        if not isinstance(entry, Mapping):
            continue
        try:
            mtime_ns, size = int(entry["mtime_ns"]), int(entry["size"])
        except (KeyError, TypeError, ValueError):
            continue
        out[str(path)] = SeenFile(mtime_ns, size, partial=entry.get("partial") is True)
    return out


def changed_entries(
    current: Mapping[str, FileReadRecord], written: Mapping[str, SeenFile]
) -> dict[str, SeenFile]:
    """The entries of `current` (the tool context's) not yet written as they are now."""
    seen = {path: SeenFile.of(r) for path, r in current.items()}
    return {path: entry for path, entry in seen.items() if written.get(path) != entry}


def restore_read_state(recorded: Mapping[str, SeenFile]) -> dict[str, FileReadRecord]:
    """The recorded entries whose file is unchanged on disk since the agent saw it."""
    from ..tools.base import FileReadRecord

    kept: dict[str, FileReadRecord] = {}
    for path, record in recorded.items():
        try:
            stat = Path(path).stat()
        except OSError:
            continue
        if (stat.st_mtime_ns, stat.st_size) == (record.mtime_ns, record.size):
            kept[path] = FileReadRecord(record.mtime_ns, record.size, record.partial)
    return kept


def snapshots_of(read_files: Mapping[str, FileReadRecord]) -> dict[str, FileTextSnapshot]:
    """The text of each (unchanged, restored) file the agent has seen: its snapshot."""
    from ..tools.services import FileTextSnapshot

    out: dict[str, FileTextSnapshot] = {}
    for path, record in read_files.items():
        if record.size > MAX_SNAPSHOT_BYTES:
            continue
        try:
            raw = Path(path).read_bytes()
        except OSError:
            continue
        if len(raw) != record.size or b"\x00" in raw[:8192]:
            continue
        text = raw.decode("utf-8", errors="replace")
        out[path] = FileTextSnapshot(record.mtime_ns, record.size, text)
    return out
