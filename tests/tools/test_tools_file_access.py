"""`FileAccess`: the file tools' text goes through it; the disk (`LocalFiles`) by default.

`Buffers` is a real `FileAccess` (an editor's open buffers in memory, the disk for the rest),
as an editor hosting the agent provides one; the ACP end-to-end test drives the editor's.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from tools_test_support import call

from queryloop.tools import ToolContext
from queryloop.tools.builtin import EditTool, MultiEditTool, ReadTool, WriteTool
from queryloop.tools.file_access import LOCAL_FILES, FileAccess, LocalFiles


@dataclasses.dataclass
class Buffers:
    """Open buffers by path (unsaved text), the disk for files not open; writes go into
    buffers and never to the disk, as an editor that has not saved yet."""

    open: dict[str, str] = dataclasses.field(default_factory=dict)
    reads: list[str] = dataclasses.field(default_factory=list)

    async def read_text(self, path: Path) -> str:
        self.reads.append(str(path))
        if str(path) in self.open:
            return self.open[str(path)]
        return await LOCAL_FILES.read_text(path)

    async def write_text(self, path: Path, text: str) -> None:
        self.open[str(path)] = text


async def test_local_files_read_and_write_text_exactly(tmp_path: Path) -> None:
    access: FileAccess = LocalFiles()
    f = tmp_path / "new" / "dir" / "a.txt"
    await access.write_text(f, "one\r\ntwo\n")  # parents created, endings as given
    assert f.read_bytes() == b"one\r\ntwo\n"
    assert await access.read_text(f) == "one\r\ntwo\n"
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"caf\xe9\n")
    with pytest.raises(UnicodeDecodeError):
        await access.read_text(bad)
    with pytest.raises(FileNotFoundError):
        await access.read_text(tmp_path / "missing.txt")


async def test_the_default_context_uses_the_disk(ctx: ToolContext) -> None:
    assert isinstance(ctx.files, LocalFiles)


async def test_read_edit_and_write_go_through_the_file_access(tmp_path: Path) -> None:
    f = tmp_path / "a.py"
    f.write_text("on disk\n")
    buffers = Buffers(open={str(f): "x = 1\r\nin the buffer\r\n"})
    ctx = ToolContext(cwd=tmp_path, files=buffers)

    read = await call(ReadTool(), {"file_path": "a.py"}, ctx)
    assert read.text == "     1\tx = 1\n     2\tin the buffer"  # CRLF lines, as on disk
    assert str(f) in ctx.read_files  # the read-state record is the disk's

    edit = {"file_path": "a.py", "old_string": "in the buffer", "new_string": "edited"}
    edited = await call(EditTool(), edit, ctx)
    assert not edited.is_error, edited.text
    assert buffers.open[str(f)] == "x = 1\r\nedited\r\n"  # CRLF kept, into the buffer
    multi = {"file_path": "a.py", "edits": [{"old_string": "x = 1", "new_string": "x = 2"}]}
    assert not (await call(MultiEditTool(), multi, ctx)).is_error
    assert buffers.open[str(f)] == "x = 2\r\nedited\r\n"
    written = await call(WriteTool(), {"file_path": "a.py", "content": "all new\n"}, ctx)
    assert not written.is_error and buffers.open[str(f)] == "all new\n"
    assert f.read_text() == "on disk\n"  # the disk was never written


async def test_a_change_on_disk_still_calls_for_a_new_read(tmp_path: Path) -> None:
    """Text from a buffer has no mtime: the record stays the disk's, so a save or a
    formatter after the Read still refuses the edit."""
    f = tmp_path / "a.txt"
    f.write_text("v1\n")
    ctx = ToolContext(cwd=tmp_path, files=Buffers(open={str(f): "buffer\n"}))
    await call(ReadTool(), {"file_path": "a.txt"}, ctx)
    f.write_text("v2 saved by someone\n")
    edit = {"file_path": "a.txt", "old_string": "buffer", "new_string": "b"}
    refused = await call(EditTool(), edit, ctx)
    assert refused.is_error and "modified since it was last read" in refused.text


async def test_a_file_written_only_into_a_buffer_leaves_no_read_record(tmp_path: Path) -> None:
    buffers = Buffers()
    ctx = ToolContext(cwd=tmp_path, files=buffers)
    created = await call(WriteTool(), {"file_path": "new.txt", "content": "hi\n"}, ctx)
    assert not created.is_error, created.text
    assert buffers.open == {str(tmp_path / "new.txt"): "hi\n"}
    assert ctx.read_files == {}  # nothing on disk to record


async def test_subagents_share_the_file_access(tmp_path: Path) -> None:
    buffers = Buffers()
    ctx = ToolContext(cwd=tmp_path, files=buffers)
    assert ctx.child(ctx.abort).files is buffers


@pytest.mark.parametrize(
    "text", ["a\r\nb\rc\nd", "one\n\n\ntwo\n", "form\x0cfeed\u2028line\r\n", "", "\r", "x"]
)
@pytest.mark.parametrize(("offset", "limit"), [(None, None), (2, 1), (3, 5)])
async def test_a_buffer_reads_as_the_same_text_on_disk_does(
    tmp_path: Path, text: str, offset: int | None, limit: int | None
) -> None:
    """Lines end at CRLF, CR and LF only, the window and the counts are the same."""
    f = tmp_path / "f.txt"
    f.write_bytes(text.encode())
    request = {"file_path": "f.txt", "offset": offset, "limit": limit}
    on_disk = await call(ReadTool(), request, ToolContext(cwd=tmp_path))
    f.write_bytes(b"something else entirely\n")
    buffered = ToolContext(cwd=tmp_path, files=Buffers(open={str(f): text}))
    assert (await call(ReadTool(), request, buffered)).text == on_disk.text
