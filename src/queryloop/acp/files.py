"""The editor's file system as the file tools' `FileAccess`: `fs/read_text_file` and
`fs/write_text_file`, when the client's `initialize` offers them.

Read, Edit, MultiEdit and Write then see the editor's unsaved buffer and write into it (the
editor shows the change and can undo it), as Claude Code's and Gemini CLI's ACP agents do.
Each direction is separate: a client that offers only reading gets its buffers read and
the disk written. The whole text is asked for (no `line`/`limit`): Read counts the file's
lines to say where a partial view ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from acp import RequestError

from ..tools.base import ToolError
from ..tools.file_access import LOCAL_FILES, FileAccess

if TYPE_CHECKING:
    from acp.interfaces import Client
    from acp.schema import ClientCapabilities


@dataclass(frozen=True)
class EditorFiles:
    """A `FileAccess` through the client for the directions it offers, the disk otherwise."""

    client: Client
    session_id: Callable[[], str]
    """The session's id (known once its Agent exists, after this is made)."""
    reads: bool
    writes: bool

    async def read_text(self, path: Path) -> str:
        """The editor's text of `path` (its unsaved buffer when the file is open)."""
        if not self.reads:
            return await LOCAL_FILES.read_text(path)
        try:
            response = await self.client.read_text_file(
                session_id=self.session_id(), path=str(path)
            )
        except RequestError as exc:
            raise ToolError(f"The editor could not read {path}: {exc}") from exc
        return response.content

    async def write_text(self, path: Path, text: str) -> None:
        """Put `text` into the editor's buffer of `path` (the editor saves it as it does)."""
        if not self.writes:
            return await LOCAL_FILES.write_text(path, text)
        try:
            await self.client.write_text_file(
                session_id=self.session_id(), path=str(path), content=text
            )
        except RequestError as exc:
            raise ToolError(f"The editor could not write {path}: {exc}") from exc


def editor_files(
    client: Client, capabilities: ClientCapabilities | None, session_id: Callable[[], str]
) -> FileAccess | None:
    """The file access the client's capabilities allow; None when it offers neither
    direction (the tools use the disk, as in the terminal)."""
    fs = capabilities.fs if capabilities is not None else None
    reads = bool(fs is not None and fs.read_text_file)
    writes = bool(fs is not None and fs.write_text_file)
    if not (reads or writes):
        return None
    return EditorFiles(client, session_id, reads=reads, writes=writes)
