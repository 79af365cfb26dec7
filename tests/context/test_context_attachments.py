"""Channel three: the attachment phases, maybe(), and each provider with real files."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path

import pytest

from queryloop.context import (
    AttachmentContext,
    AttachmentType,
    get_attachment_messages,
    get_attachments,
    maybe,
)
from queryloop.context.attachments import DEFAULT_PROVIDER_TIMEOUT
from queryloop.context.providers.mentions import parse_mentions
from queryloop.messages import (
    Attachment,
    AttachmentMessage,
    Message,
    ToolUseBlock,
    assistant_message,
    attachment_message,
    tool_result_message,
    user_message,
)
from queryloop.tools.base import FileReadRecord, ToolContext


def ctx_for(tmp_path: Path, **kw: object) -> AttachmentContext:
    return AttachmentContext(cwd=tmp_path, **kw)  # type: ignore[arg-type]


def types(attachments: Sequence[Attachment]) -> list[str]:
    return [a.type for a in attachments]


# -- maybe ------------------------------------------------------------------------------


async def test_maybe_drops_a_failing_provider_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    async def boom() -> list[Attachment]:
        raise RuntimeError("provider exploded")

    with caplog.at_level(logging.WARNING, logger="queryloop.context.attachments"):
        assert await maybe("boom", boom, 1.0) == []
    assert "'boom' failed" in caplog.text and "provider exploded" in caplog.text


async def test_maybe_drops_a_hanging_provider(caplog: pytest.LogCaptureFixture) -> None:
    never = asyncio.Event()

    async def hang() -> list[Attachment]:
        await never.wait()
        return [Attachment("x")]

    with caplog.at_level(logging.WARNING, logger="queryloop.context.attachments"):
        assert await maybe("hang", hang, 0.05) == []
    assert "'hang' timed out" in caplog.text


async def test_a_broken_provider_does_not_break_the_turn(tmp_path: Path) -> None:
    async def broken() -> list[str]:
        raise OSError("disk on fire")

    async def hanging() -> list[str]:
        await asyncio.Event().wait()
        return []

    ctx = ctx_for(
        tmp_path,
        queued_commands=["also fix the docs"],
        diagnostics=broken,
        mcp_resource_resolver=lambda s, u: hanging(),
        provider_timeout=0.1,
    )
    got = await get_attachments("see @srv:res://x", ctx, [])
    assert types(got) == [AttachmentType.QUEUED_COMMAND]


# -- phases -----------------------------------------------------------------------------


async def test_phase_order_and_main_thread_only(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("print('a')\n")

    async def diags() -> list[str]:
        return ["a.py:1: unused import"]

    common = {
        "queued_commands": ["queued"],
        "deferred_tools": ["mcp__x__y"],
        "used_tokens": 190_000,
        "context_window": 200_000,
        "warning_threshold": 150_000,
        "diagnostics": diags,
    }
    main = await get_attachments("look at @a.py", ctx_for(tmp_path, **common), [])
    assert types(main) == [
        AttachmentType.FILE,
        AttachmentType.QUEUED_COMMAND,
        AttachmentType.DEFERRED_TOOLS_DELTA,
        AttachmentType.CONTEXT_USAGE,
        AttachmentType.DIAGNOSTICS,
    ]
    sub = await get_attachments(
        "look at @a.py", ctx_for(tmp_path, is_main_thread=False, **common), []
    )
    assert AttachmentType.CONTEXT_USAGE not in types(sub)
    assert AttachmentType.DIAGNOSTICS not in types(sub)


async def test_attachment_messages_are_meta(tmp_path: Path) -> None:
    msgs = await get_attachment_messages(None, ctx_for(tmp_path, queued_commands=["q"]), [])
    assert len(msgs) == 1 and isinstance(msgs[0], AttachmentMessage) and msgs[0].is_meta


def test_default_timeout_is_positive() -> None:
    assert DEFAULT_PROVIDER_TIMEOUT > 0


# -- @-mentions -------------------------------------------------------------------------


def test_parse_mentions_syntax() -> None:
    got = parse_mentions(
        'see @a.py, @src/b.py#L10-20 and @"my dir/c d.txt"#L3 or @"x y.md"; mail a@b.com @c.py#L5.'
    )
    assert [(m.path, m.start_line, m.end_line) for m in got] == [
        ("a.py,", None, None),
        ("src/b.py", 10, 20),
        ("my dir/c d.txt", 3, 3),
        ("x y.md", None, None),
        ("c.py", 5, 5),
    ]


async def test_mentioned_file_with_line_range(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("".join(f"line {i}\n" for i in range(1, 51)))
    got = await get_attachments("check @big.py#L10-12.", ctx_for(tmp_path), [])
    [file] = got
    assert file.type == AttachmentType.FILE
    assert file.data["content"] == "line 10\nline 11\nline 12"
    assert (file.data["start_line"], file.data["end_line"]) == (10, 12)
    assert file.data["path"] == str((tmp_path / "big.py").resolve())


async def test_mentioned_file_with_spaces_whole_and_missing(tmp_path: Path) -> None:
    (tmp_path / "my notes.md").write_text("hello\nworld\n")
    got = await get_attachments('read @"my notes.md" and @nothere.py', ctx_for(tmp_path), [])
    [file] = got
    assert file.data["content"] == "hello\nworld" and "end_line" not in file.data


async def test_mentioned_folder_lists_entries(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "inner").mkdir(parents=True)
    (tmp_path / "pkg" / "mod.py").write_text("")
    [listing] = await get_attachments("what is in @pkg", ctx_for(tmp_path), [])
    assert listing.type == AttachmentType.DIRECTORY
    assert listing.data["listing"] == "inner/\nmod.py"


async def test_binary_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    assert await get_attachments("@blob.bin", ctx_for(tmp_path), []) == []


async def test_mcp_resource_through_resolver(tmp_path: Path) -> None:
    calls: list[tuple[str, str]] = []

    async def resolve(server: str, uri: str) -> str:
        calls.append((server, uri))
        return "resource body"

    got = await get_attachments(
        "use @docs:file:///guide.md", ctx_for(tmp_path, mcp_resource_resolver=resolve), []
    )
    assert calls == [("docs", "file:///guide.md")]
    assert [(a.type, a.data["content"]) for a in got] == [
        (AttachmentType.MCP_RESOURCE, "resource body")
    ]


# -- changed files ----------------------------------------------------------------------


def read_record(path: Path) -> FileReadRecord:
    st = path.stat()
    return FileReadRecord(mtime_ns=st.st_mtime_ns, size=st.st_size)


def bump(path: Path, text: str) -> None:
    old = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(old + 5_000_000_000, old + 5_000_000_000))  # a clearly newer mtime


async def test_changed_file_is_announced_once_with_snippet_then_diff(tmp_path: Path) -> None:
    f = tmp_path / "app.py"
    f.write_text("a = 1\n")
    tc = ToolContext(cwd=tmp_path)
    tc.read_files[str(f)] = read_record(f)
    ctx = ctx_for(tmp_path, tool_context=tc)
    assert await get_attachments(None, ctx, []) == []  # unchanged: nothing

    bump(f, "a = 2\nb = 3\n")
    [first] = await get_attachments(None, ctx, [])
    assert first.type == AttachmentType.EDITED_FILE
    assert first.data["snippet"] == "a = 2\nb = 3"
    history = [AttachmentMessage(attachment=first)]
    assert await get_attachments(None, ctx, history) == []  # announced: not again

    bump(f, "a = 2\nb = 4\n")
    [second] = await get_attachments(None, ctx, history)
    assert "-b = 3" in second.data["diff"] and "+b = 4" in second.data["diff"]


async def test_file_the_agent_reread_is_not_announced(tmp_path: Path) -> None:
    f = tmp_path / "app.py"
    f.write_text("x\n")
    tc = ToolContext(cwd=tmp_path)
    tc.read_files[str(f)] = read_record(f)
    bump(f, "y\n")
    tc.read_files[str(f)] = read_record(f)  # the agent read (or wrote) it again
    assert await get_attachments(None, ctx_for(tmp_path, tool_context=tc), []) == []


# -- nested memory ----------------------------------------------------------------------


async def test_nested_memory_for_touched_folders_once(tmp_path: Path) -> None:
    deep = tmp_path / "lib" / "core"
    deep.mkdir(parents=True)
    (tmp_path / "QUERYLOOP.md").write_text("top level: in the user context already")
    (tmp_path / "lib" / "AGENTS.md").write_text("lib rules")
    (deep / "QUERYLOOP.md").write_text("core rules")
    (deep / "x.py").write_text("")
    history: list[Message] = [
        user_message("edit it"),
        assistant_message(
            [ToolUseBlock(id="t1", name="Read", input={"file_path": "lib/core/x.py"})],
            message_id="m1",
        ),
        tool_result_message("t1", "ok"),
    ]
    got = await get_attachments(None, ctx_for(tmp_path), history)
    assert [(a.type, a.data["content"]) for a in got] == [
        (AttachmentType.NESTED_MEMORY, "lib rules"),
        (AttachmentType.NESTED_MEMORY, "core rules"),
    ]
    again = [*history, *(AttachmentMessage(attachment=a) for a in got)]
    assert await get_attachments(None, ctx_for(tmp_path), again) == []


async def test_nested_memory_from_an_at_mention(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "AGENTS.md").write_text("sub rules")
    (tmp_path / "sub" / "m.py").write_text("pass\n")
    got = await get_attachments("look at @sub/m.py", ctx_for(tmp_path), [])
    assert types(got) == [AttachmentType.FILE, AttachmentType.NESTED_MEMORY]


# -- reminders --------------------------------------------------------------------------


async def test_date_change_against_initial_and_last_announced(tmp_path: Path) -> None:
    def at(day: int) -> AttachmentContext:
        return ctx_for(
            tmp_path, initial_date=date(2026, 1, 1), now=lambda: datetime(2026, 1, day, 0, 5)
        )

    assert await get_attachments(None, at(1), []) == []
    [change] = await get_attachments(None, at(2), [])
    assert change.data["date"] == "2026-01-02"
    history = [AttachmentMessage(attachment=change)]
    assert await get_attachments(None, at(2), history) == []
    assert types(await get_attachments(None, at(3), history)) == [AttachmentType.DATE_CHANGE]


def turn(i: int, tool: str | None = None) -> list[Message]:
    blocks = [ToolUseBlock(id=f"t{i}", name=tool, input={})] if tool else []
    if not blocks:
        return [assistant_message(f"step {i}", message_id=f"m{i}")]
    return [assistant_message(blocks, message_id=f"m{i}"), tool_result_message(f"t{i}", "ok")]


async def test_todo_reminder_after_n_quiet_turns(tmp_path: Path) -> None:
    tc = ToolContext(cwd=tmp_path)
    tc.todos = [{"content": "ship", "status": "in_progress"}]
    ctx = ctx_for(tmp_path, tool_context=tc, tools=["TodoWrite"], todo_reminder_turns=3)
    history = turn(0, "TodoWrite") + turn(1) + turn(2)
    assert await get_attachments(None, ctx, history) == []
    history += turn(3)
    [reminder] = await get_attachments(None, ctx, history)
    assert reminder.data["todos"] == tc.todos
    history.append(AttachmentMessage(attachment=reminder))
    history += turn(4)
    assert await get_attachments(None, ctx, history) == []  # counted from the reminder
    no_tool = ctx_for(tmp_path, tool_context=tc, tools=[], todo_reminder_turns=3)
    assert await get_attachments(None, no_tool, history + turn(5) + turn(6) + turn(7)) == []


async def test_context_usage_warning_threshold(tmp_path: Path) -> None:
    below = ctx_for(tmp_path, used_tokens=100, warning_threshold=101, context_window=200)
    assert await get_attachments(None, below, []) == []
    at = ctx_for(tmp_path, used_tokens=101, warning_threshold=101, context_window=200)
    [warning] = await get_attachments(None, at, [])
    assert warning.data["remaining_tokens"] == 99


def test_attachment_message_helper_shape() -> None:
    m = attachment_message("queued_command", prompt="x")
    assert m.attachment.data == {"prompt": "x"}


async def test_no_stale_diff_after_the_agent_edited_the_file(tmp_path: Path) -> None:
    f = tmp_path / "app.py"
    f.write_text("one\n")
    tc = ToolContext(cwd=tmp_path)
    tc.read_files[str(f)] = read_record(f)
    ctx = ctx_for(tmp_path, tool_context=tc)
    bump(f, "two\n")
    history = [AttachmentMessage(attachment=a) for a in await get_attachments(None, ctx, [])]
    bump(f, "three (the agent's own edit)\n")
    tc.read_files[str(f)] = read_record(f)  # Edit records what it wrote
    bump(f, "four\n")
    [change] = await get_attachments(None, ctx, history)
    assert "diff" not in change.data and change.data["snippet"] == "four"


async def test_a_huge_changed_file_is_named_not_read(tmp_path: Path) -> None:
    f = tmp_path / "app.log"
    f.write_text("start\n")
    tc = ToolContext(cwd=tmp_path)
    tc.read_files[str(f)] = read_record(f)
    bump(f, "x" * (600 * 1024))
    [change] = await get_attachments(None, ctx_for(tmp_path, tool_context=tc), [])
    assert change.data["too_large"] is True and "snippet" not in change.data
