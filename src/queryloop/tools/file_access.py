"""Where the file tools get a file's text and put it back: the `FileAccess` extension point.

Read, Edit, MultiEdit and Write decide everything about a file (its path, the permission
check, whether it exists, whether it is binary or an image, the read-state record) on the
disk; only its text goes through a `FileAccess`. The default, `LocalFiles`, is the disk.
An editor that hosts the agent (`queryloop acp`) passes one that asks the editor, so the
model reads and edits what the user sees, unsaved changes included (docs/acp.md).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Protocol, runtime_checkable


@runtime_checkable
class FileAccess(Protocol):
    """Reads and writes the whole text of one file. Paths are absolute and resolved (the
    tools resolve them); the caller has checked permissions and read-state."""

    async def read_text(self, path: Path) -> str:
        """The file's text exactly (line endings kept). Raises `OSError` when it cannot be
        read and `UnicodeDecodeError` when its bytes are not UTF-8."""
        ...

    async def write_text(self, path: Path, text: str) -> None:
        """Replace the file's text with exactly `text`, creating it (and missing parent
        folders) when it does not exist."""
        ...


class LocalFiles:
    """The local disk, UTF-8, line endings as they are: the file tools' default."""

    async def read_text(self, path: Path) -> str:
        """The file's text from the disk (off the event loop: a file may be large)."""
        return await asyncio.to_thread(_read, path)

    async def write_text(self, path: Path, text: str) -> None:
        """Write `text` to the disk, parents created."""
        await asyncio.to_thread(_write, path, text)


def _read(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as f:
        return f.read()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as f:
        f.write(text)


LOCAL_FILES = LocalFiles()
"""The one local-disk access (it holds no state)."""
