"""Read, Write, Edit, MultiEdit and TodoWrite against real files."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest
from tools_test_support import call

from queryloop.messages.blocks import ImageBlock
from queryloop.tools import ToolContext
from queryloop.tools.builtin import (
    EditTool,
    MultiEditTool,
    ReadTool,
    TodoWriteTool,
    WriteTool,
    builtin_tools,
)

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def touch_later(path: Path) -> None:
    """Change the file the way another program would (new content, new mtime)."""
    st = path.stat()
    path.write_text(path.read_text() + "# changed elsewhere\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))


# -- Read ---------------------------------------------------------------------------------


async def test_read_numbers_lines_and_records_the_read(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("alpha\nbeta\ngamma\n")
    got = await call(ReadTool(), {"file_path": "a.txt"}, ctx)
    assert got.text == "     1\talpha\n     2\tbeta\n     3\tgamma"
    assert str(f) in ctx.read_files and not ctx.read_files[str(f)].partial


async def test_read_offset_limit_and_long_lines(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "big.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 3001)) + "x" * 2500 + "\n")
    part = await call(ReadTool(), {"file_path": str(f), "offset": 10, "limit": 2}, ctx)
    assert part.text.startswith("    10\tline 10\n    11\tline 11")
    assert "Use offset=12" in part.text and ctx.read_files[str(f)].partial
    default = await call(ReadTool(), {"file_path": str(f)}, ctx)
    assert "  2000\tline 2000" in default.text and "line 2001" not in default.text
    tail = await call(ReadTool(), {"file_path": str(f), "offset": 3001}, ctx)
    assert "[line truncated, 2500 characters]" in tail.text and len(tail.text) < 2200
    past = await call(ReadTool(), {"file_path": str(f), "offset": 5000}, ctx)
    assert "only 3001 lines" in past.text


async def test_read_image_binary_empty_missing_and_directory(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "dot.png").write_bytes(PNG_1PX)
    image = await call(ReadTool(), {"file_path": "dot.png"}, ctx)
    assert isinstance(image.block.content, tuple)
    block = image.block.content[0]
    assert isinstance(block, ImageBlock) and block.source["media_type"] == "image/png"
    assert base64.b64decode(block.source["data"]) == PNG_1PX

    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    binary = await call(ReadTool(), {"file_path": "blob.bin"}, ctx)
    assert binary.is_error and "binary file" in binary.text

    (tmp_path / "empty.txt").write_text("")
    empty = await call(ReadTool(), {"file_path": "empty.txt"}, ctx)
    assert not empty.is_error and "exists but is empty" in empty.text

    missing = await call(ReadTool(), {"file_path": "nope.txt"}, ctx)
    assert missing.is_error and "File does not exist" in missing.text

    folder = await call(ReadTool(), {"file_path": "."}, ctx)
    assert folder.is_error and "Use LS" in folder.text


async def test_file_tools_ask_outside_working_dirs_even_through_symlinks(
    ctx: ToolContext, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("s")
    (tmp_path / "link").symlink_to(outside)
    read = ReadTool()
    for raw in ("link/secret.txt", "../" + outside.name + "/secret.txt", str(outside)):
        decision = await read.check_permissions(read.input_model(file_path=raw), ctx)
        assert decision.behavior == "ask" and "outside the working directories" in decision.message
    inside = await read.check_permissions(read.input_model(file_path="x.txt"), ctx)
    assert inside.behavior == "passthrough"
    ctx.additional_dirs.append(outside)
    allowed = await read.check_permissions(read.input_model(file_path="link/secret.txt"), ctx)
    assert allowed.behavior == "passthrough"
    assert WriteTool().permission_subject({"file_path": "a.txt", "content": ""}) == "a.txt"


# -- Write --------------------------------------------------------------------------------


async def test_write_new_file_creates_parents(ctx: ToolContext, tmp_path: Path) -> None:
    got = await call(WriteTool(), {"file_path": "deep/er/new.py", "content": "x = 1\n"}, ctx)
    assert not got.is_error and "created" in got.text
    assert (tmp_path / "deep/er/new.py").read_text() == "x = 1\n"


async def test_write_existing_requires_fresh_read(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "a.txt"
    f.write_text("old\n")
    unread = await call(WriteTool(), {"file_path": "a.txt", "content": "new\n"}, ctx)
    assert unread.is_error and "has not been read yet" in unread.text
    assert f.read_text() == "old\n"
    await call(ReadTool(), {"file_path": "a.txt"}, ctx)
    touch_later(f)
    stale = await call(WriteTool(), {"file_path": "a.txt", "content": "new\n"}, ctx)
    assert stale.is_error and "modified since it was last read" in stale.text
    await call(ReadTool(), {"file_path": "a.txt"}, ctx)
    ok = await call(WriteTool(), {"file_path": "a.txt", "content": "new\n"}, ctx)
    assert not ok.is_error and "updated" in ok.text and f.read_text() == "new\n"
    again = await call(WriteTool(), {"file_path": "a.txt", "content": "newer\n"}, ctx)
    assert not again.is_error  # our own write counts as seen


# -- Edit ---------------------------------------------------------------------------------


@pytest.fixture
def code(ctx: ToolContext, tmp_path: Path) -> Path:
    f = tmp_path / "code.py"
    f.write_text("".join(f"line{i} = {i}\n" for i in range(1, 21)) + "dup\ndup\n")
    return f


async def test_edit_replaces_and_shows_numbered_snippet(ctx: ToolContext, code: Path) -> None:
    await call(ReadTool(), {"file_path": str(code)}, ctx)
    got = await call(
        EditTool(),
        {"file_path": "code.py", "old_string": "line10 = 10", "new_string": "line10 = 'ten'"},
        ctx,
    )
    assert not got.is_error
    assert "    10\tline10 = 'ten'" in got.text and "     6\tline6 = 6" in got.text
    assert "line1 = 1" not in got.text.replace("line10", "")
    assert "line10 = 'ten'\n" in code.read_text()
    second = await call(
        EditTool(),
        {"file_path": "code.py", "old_string": "line11 = 11", "new_string": "line11 = 'eleven'"},
        ctx,
    )
    assert not second.is_error  # the first edit refreshed the read record


async def test_edit_failures_are_actionable(ctx: ToolContext, code: Path) -> None:
    edit = EditTool()
    args = {"file_path": "code.py", "old_string": "dup", "new_string": "one"}
    unread = await call(edit, args, ctx)
    assert unread.is_error and "has not been read yet" in unread.text
    await call(ReadTool(), {"file_path": "code.py"}, ctx)
    twice = await call(edit, args, ctx)
    assert twice.is_error and "Found 2 matches" in twice.text and "replace_all" in twice.text
    absent = await call(edit, {**args, "old_string": "nowhere"}, ctx)
    assert absent.is_error and "not found" in absent.text and "0 matches" in absent.text
    same = await call(edit, {**args, "new_string": "dup"}, ctx)
    assert same.is_error and "No changes to make" in same.text
    missing = await call(edit, {"file_path": "code.py", "new_string": "x"}, ctx)
    assert missing.text == "InputValidationError: Edit failed: `old_string` is required"
    assert code.read_text().count("dup") == 2
    all_ = await call(edit, {**args, "replace_all": True}, ctx)
    assert not all_.is_error and code.read_text().count("one\n") == 2


async def test_edit_refuses_a_file_changed_since_read(ctx: ToolContext, code: Path) -> None:
    await call(ReadTool(), {"file_path": "code.py"}, ctx)
    touch_later(code)
    got = await call(
        EditTool(),
        {"file_path": "code.py", "old_string": "line1 = 1\n", "new_string": "line1 = 0\n"},
        ctx,
    )
    assert got.is_error and "modified since it was last read" in got.text


async def test_edit_with_empty_old_string_creates_a_file(ctx: ToolContext, tmp_path: Path) -> None:
    got = await call(
        EditTool(), {"file_path": "fresh.txt", "old_string": "", "new_string": "hello\n"}, ctx
    )
    assert not got.is_error and (tmp_path / "fresh.txt").read_text() == "hello\n"


async def test_multiedit_is_atomic_and_sequential(ctx: ToolContext, code: Path) -> None:
    await call(ReadTool(), {"file_path": "code.py"}, ctx)
    before = code.read_text()
    bad = await call(
        MultiEditTool(),
        {
            "file_path": "code.py",
            "edits": [
                {"old_string": "line1 = 1\n", "new_string": "first = 1\n"},
                {"old_string": "not there", "new_string": "x"},
            ],
        },
        ctx,
    )
    assert bad.is_error and "Edit 2 of 2" in bad.text and code.read_text() == before
    good = await call(
        MultiEditTool(),
        {
            "file_path": "code.py",
            "edits": [
                {"old_string": "line1 = 1\n", "new_string": "first = 1\n"},
                {"old_string": "first = 1", "new_string": "first = 'one'"},
                {"old_string": "dup", "new_string": "d", "replace_all": True},
            ],
        },
        ctx,
    )
    assert not good.is_error
    text = code.read_text()
    assert text.startswith("first = 'one'\n") and text.endswith("d\nd\n")
    empty = await call(MultiEditTool(), {"file_path": "code.py", "edits": []}, ctx)
    assert empty.is_error and "`edits`" in empty.text


# -- TodoWrite ----------------------------------------------------------------------------


async def test_todowrite_stores_the_list(ctx: ToolContext) -> None:
    todos = [
        {"content": "Write tests", "status": "in_progress", "activeForm": "Writing tests"},
        {"content": "Ship", "status": "pending", "id": "2"},
    ]
    got = await call(TodoWriteTool(), {"todos": todos}, ctx)
    assert not got.is_error and "1 pending, 1 in_progress, 0 completed" in got.text
    assert ctx.todos == todos
    bad = await call(TodoWriteTool(), {"todos": [{"content": "x", "status": "doing"}]}, ctx)
    assert bad.is_error and "`todos.0.status`" in bad.text and ctx.todos == todos


def test_builtin_tools_are_fresh_and_named_like_claude_code() -> None:
    # The Agent tool lives with the subagents (queryloop.agents) and takes its place here.
    from queryloop.agents.tool import AgentTool

    first = builtin_tools(provided=[AgentTool()])
    second = builtin_tools(provided=[AgentTool()])
    names = [t.name for t in first]
    assert names == [
        "Bash",
        "Glob",
        "Grep",
        "LS",
        "Read",
        "Edit",
        "MultiEdit",
        "Write",
        "TodoWrite",
        "Agent",
        "TaskOutput",
        "TaskStop",
        "WebFetch",
        "WebSearch",
    ]
    assert all(a is not b for a, b in zip(first, second, strict=True))
    for t in first:
        schema = t.input_schema()
        assert schema["type"] == "object" and t.description
        assert all("title" not in p for p in schema["properties"].values())
        # Rendered once per input model (every session asks for every tool's): each caller
        # still gets its own copy to change.
        schema["properties"].clear()
        assert t.input_schema()["properties"]
    safe = {t.name for t in first if t.is_concurrency_safe(None)}
    assert safe == {"Glob", "Grep", "LS", "Read", "Agent", "TaskOutput", "WebFetch", "WebSearch"}
    assert [t.name for t in builtin_tools()] == [n for n in names if n != "Agent"]
    assert [t.name for t in builtin_tools(["Task", "Read"], provided=[AgentTool()])] == [
        "Read",
        "Agent",
    ]


async def test_edit_keeps_crlf_line_endings(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "win.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await call(ReadTool(), {"file_path": "win.txt"}, ctx)
    got = await call(
        EditTool(),
        {"file_path": "win.txt", "old_string": "one\ntwo", "new_string": "uno\ndos"},
        ctx,
    )
    assert not got.is_error
    assert f.read_bytes() == b"uno\r\ndos\r\nthree\r\n"


async def test_edit_refuses_non_utf8_clearly(ctx: ToolContext, tmp_path: Path) -> None:
    f = tmp_path / "latin.txt"
    f.write_bytes("caf\xe9\n".encode("latin-1"))
    await call(ReadTool(), {"file_path": "latin.txt"}, ctx)
    got = await call(
        EditTool(), {"file_path": "latin.txt", "old_string": "caf", "new_string": "bar"}, ctx
    )
    assert got.is_error and "not valid UTF-8" in got.text


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("Read", "file_path"),
        ("Write", "file_path"),
        ("Edit", "file_path"),
        ("MultiEdit", "file_path"),
        ("Glob", "path"),
        ("Grep", "path"),
        ("LS", "path"),
    ],
)
async def test_every_file_tool_asks_before_leaving_the_working_folders(
    tmp_path: Path, name: str, field: str
) -> None:
    from queryloop.tools import builtin_tools
    from queryloop.tools.base import ToolContext

    tool = next(t for t in builtin_tools() if t.name == name)
    ctx = ToolContext(cwd=tmp_path / "work")
    outside = str(tmp_path / "elsewhere" / "x")
    assert tool.permission_subject({field: outside}) == outside
    decision = await tool.check_permissions({field: outside}, ctx)
    assert decision.behavior == "ask" and "outside" in decision.message
    inside = await tool.check_permissions({field: str(tmp_path / "work" / "x")}, ctx)
    assert inside.behavior == "passthrough"
