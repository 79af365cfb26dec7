"""`JsonlSessionStore`: the transcripts as files, the default store (unchanged on disk).

Layout: `<root>/<project-key>/<session-id>.jsonl`, a subkey at
`<root>/<project-key>/<session-id>/<subpath>.jsonl` (a subagent's:
`<session-id>/subagents/agent-<id>.jsonl`), where `root` is `$QUERYLOOP_HOME/projects`.

Every `append` is one `write()` per record on an `O_APPEND` descriptor (kept open per file),
fsynced before it returns when the store is made with `fsync=True`; with `fsync=False` each
record still reaches the kernel at once (a kill -9 loses nothing) and `sync(key)` makes it
durable across an OS crash at a natural point (the end of a prompt). A kill can cut the
record being written: `load` skips a line that does not parse and `load_checked` says so.

This is the one module that opens transcript files; every reader goes through a store.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from .store import TRANSCRIPT_SUFFIX, SessionError
from .store_api import (
    MAIN_SUBPATH,
    SessionKey,
    SessionListSubkeysKey,
    SessionStoreEntry,
    SessionStoreListEntry,
    subpath_of,
)


class JsonlSessionStore:
    """The transcripts as JSONL files under `root` (`$QUERYLOOP_HOME/projects`)."""

    def __init__(self, root: Path | str, *, fsync: bool = True) -> None:
        self.root = Path(root).expanduser()
        self.fsync = fsync
        self._fds: dict[Path, int] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_file(
        cls, path: Path | str, *, fsync: bool = True
    ) -> tuple[JsonlSessionStore, SessionKey]:
        """The store and key that address the transcript file at `path` (any `.jsonl`
        file: its folder is the project, its name the session)."""
        path = Path(path).expanduser()
        if path.suffix != TRANSCRIPT_SUFFIX:
            raise SessionError(f"{path} is not a transcript (a {TRANSCRIPT_SUFFIX} file)")
        store = cls(path.parent.parent, fsync=fsync)
        return store, SessionKey(project_key=path.parent.name, session_id=path.stem)

    # ---- where ---------------------------------------------------------------------------

    def path_of(self, key: SessionKey) -> Path:
        """The file of `key` (it may not exist yet). Refuses a key that would leave `root`."""
        project, session = _part(key["project_key"]), _part(key["session_id"])
        subpath = subpath_of(key)
        if subpath == MAIN_SUBPATH:
            return self.root / project / f"{session}{TRANSCRIPT_SUFFIX}"
        parts = [_part(p) for p in subpath.split("/")]
        return self.root.joinpath(project, session, *parts[:-1], parts[-1] + TRANSCRIPT_SUFFIX)

    def describe(self, key: SessionKey) -> str:
        """Where the transcript is, for a person: its file."""
        return str(self.path_of(key))

    # ---- the protocol --------------------------------------------------------------------

    def append(self, key: SessionKey, entries: Sequence[SessionStoreEntry]) -> None:
        """Write each entry as one line; fsynced on return when the store fsyncs."""
        if not entries:
            return
        path = self.path_of(key)
        data = b"".join(_line(e) for e in entries)
        with self._lock:
            fd = self._open(path)
            written = 0
            # os.write may write less than asked for; loop so a record is never left
            # half-written by us (only by a kill, which the reader tolerates).
            while written < len(data):
                written += os.write(fd, data[written:])
            if self.fsync:
                os.fsync(fd)

    def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """Every record that parses, in file order; None when there is no file."""
        checked = self.load_checked(key)
        return None if checked is None else checked[0]

    def load_checked(self, key: SessionKey) -> tuple[list[SessionStoreEntry], list[str]] | None:
        """`load`, and in words every line skipped (truncated by a kill, garbled)."""
        try:
            raw = self.path_of(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None
        return parse_lines(raw)

    def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The project's transcripts, newest (last written) first."""
        folder = self.root / _part(project_key)
        if not folder.is_dir():
            return []
        found: list[SessionStoreListEntry] = []
        for path in folder.iterdir():
            if path.suffix != TRANSCRIPT_SUFFIX or not path.is_file():
                continue
            try:
                mtime = path.stat().st_mtime_ns // 1_000_000
            except OSError:
                continue
            found.append(SessionStoreListEntry(session_id=path.stem, mtime=mtime))
        return sorted(found, key=lambda e: e["mtime"], reverse=True)

    def delete(self, key: SessionKey) -> None:
        """Remove the file; a main key removes the session's folder too (its subkeys)."""
        path = self.path_of(key)
        with self._lock:
            self._forget(path)
            if subpath_of(key) == MAIN_SUBPATH:
                folder = path.parent / path.stem
                for open_path in [p for p in self._fds if folder in p.parents]:
                    self._forget(open_path)
                shutil.rmtree(folder, ignore_errors=True)
            path.unlink(missing_ok=True)

    def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The subpaths of the session's folder's transcripts, sorted."""
        folder = self.root / _part(key["project_key"]) / _part(key["session_id"])
        if not folder.is_dir():
            return []
        return sorted(
            p.relative_to(folder).with_suffix("").as_posix()
            for p in folder.rglob(f"*{TRANSCRIPT_SUFFIX}")
            if p.is_file()
        )

    # ---- beyond the protocol -------------------------------------------------------------

    def list_projects(self) -> list[str]:
        """Every project key that has a folder."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if p.is_dir())

    def sync(self, key: SessionKey) -> None:
        """fsync what was appended to `key`: durable across an OS crash too."""
        with self._lock:
            fd = self._fds.get(self.path_of(key))
            if fd is not None:
                os.fsync(fd)

    def release(self, key: SessionKey) -> None:
        """Close the descriptor kept open for `key` (a later append opens it again)."""
        with self._lock:
            self._forget(self.path_of(key))

    def close(self) -> None:
        """Close every descriptor (records are already written)."""
        with self._lock:
            for path in list(self._fds):
                self._forget(path)

    def __del__(self) -> None:
        # A forgotten close must not leak descriptors in long-lived hosts.
        for fd in self._fds.values():
            try:
                os.close(fd)
            except OSError:
                pass

    def _open(self, path: Path) -> int:
        fd = self._fds.get(path)
        if fd is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            created = not path.exists()
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            if created and self.fsync:
                _fsync_dir(path.parent)
            elif not created and _ends_without_newline(path):
                # A kill cut the last record; start on a fresh line so ours stays parseable.
                os.write(fd, b"\n")
            self._fds[path] = fd
        return fd

    def _forget(self, path: Path) -> None:
        fd = self._fds.pop(path, None)
        if fd is not None:
            os.close(fd)


def parse_lines(raw: bytes) -> tuple[list[SessionStoreEntry], list[str]]:
    """The JSON object lines of a transcript, and in words the lines that are not."""
    entries: list[SessionStoreEntry] = []
    problems: list[str] = []
    lines = raw.split(b"\n")
    # A file that does not end in a newline was cut mid-record by a kill.
    last_content = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            where = "truncated last line" if index == last_content else f"garbled line {index + 1}"
            problems.append(f"{where} skipped ({len(line)} bytes)")
            continue
        if not isinstance(record, dict):
            problems.append(f"line {index + 1}: not a JSON object, skipped")
            continue
        entries.append(record)
    return entries, problems


def now_ms() -> int:
    """Milliseconds since the epoch (`SessionStoreListEntry.mtime`)."""
    return time.time_ns() // 1_000_000


def _line(entry: SessionStoreEntry) -> bytes:
    # default=str: a stray Path or datetime in metadata must not crash the session; it is
    # stored as text (readable, if no longer typed).
    text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str)
    return (text + "\n").encode("utf-8")


def _part(name: str) -> str:
    """One path component of a key: refused when it could name another place."""
    if not name or name in {".", ".."} or "/" in name or "\\" in name or "\x00" in name:
        raise SessionError(f"{name!r} cannot name a transcript (empty, a path or a dot name)")
    return name


def _fsync_dir(folder: Path) -> None:
    """Make a newly created file's directory entry durable too."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _ends_without_newline(path: Path) -> bool:
    size = path.stat().st_size
    if size == 0:
        return False
    with path.open("rb") as handle:
        handle.seek(size - 1)
        return handle.read(1) != b"\n"
