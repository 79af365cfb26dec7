"""Hard links: a write to a file that shares its inode with a protected file writes that file.

`os.link(".claude/settings.json", "notes.json")` in an interpreter leaves a file whose name
protects nothing; an Edit of `notes.json`, or `echo … > notes.json`, then rewrites the
settings. A file with more than one link (`st_nlink > 1`) is looked for among the protected
files: every protected entry on the same device (a folder walked), and every file below the
working folders (a nested project's layout, `sub/.claude/settings.json`, is protected by
name). The walk is bounded; past `MAX_FILES` the write fails closed. Symbolic links are
resolved by `ProtectedPaths.find` already; this is for the link a name cannot show.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

from ..protected import ProtectedEntry, ProtectedPaths

MAX_FILES = 200_000
_UNPLACED = "a file with other hard links the check could not place"


def hard_link_entry(protected: ProtectedPaths, path: Path | str) -> ProtectedEntry | None:
    """The protected entry whose file `path` is another name of (same device and inode),
    or None; a fail-closed entry when the search is cut short."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
        return None
    inode = (info.st_dev, info.st_ino)
    itself = os.path.normpath(os.path.abspath(path))
    seen = 0
    for candidate in _candidates(protected, info.st_dev):
        seen += 1
        if seen > MAX_FILES:
            return ProtectedEntry(Path(path), False, _UNPLACED)
        try:
            found = os.lstat(candidate)
        except OSError:
            continue
        if (found.st_dev, found.st_ino) != inode or os.path.normpath(candidate) == itself:
            continue
        entry = protected.find(candidate)
        if entry is not None:
            return entry
    return None


def _candidates(protected: ProtectedPaths, device: int) -> Iterator[str]:
    """Every file of a protected entry, then every file below the working folders, on
    `device` (a hard link never crosses one)."""
    for entry in protected.entries:
        yield from _files(str(entry.path), device)
    for root in protected.roots:
        yield from _files(str(root), device)


def _files(top: str, device: int) -> Iterator[str]:
    try:
        info = os.lstat(top)
    except OSError:
        return
    if info.st_dev != device:
        return
    if stat.S_ISREG(info.st_mode):
        yield top
        return
    if not stat.S_ISDIR(info.st_mode):
        return
    for folder, _dirs, files in os.walk(top):
        for name in files:
            yield os.path.join(folder, name)
