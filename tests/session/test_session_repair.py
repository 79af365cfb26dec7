"""Loading what a crash leaves: truncated lines and orphan tool_uses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from queryloop.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    assistant_message,
    tool_result_message,
    user_message,
)
from queryloop.session import INTERRUPTED_TOOL_RESULT, Transcript, load_transcript


def test_truncated_last_line_is_skipped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    first, second = user_message("one"), assistant_message("two")
    with Transcript(path) as w:
        w.append(first)
        w.append(second)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 17])  # cut inside the last record
    loaded = load_transcript(path)
    assert loaded.messages == [first]
    assert any("truncated last line" in p for p in loaded.problems)
    # Appending after the cut starts on a fresh line, so the new record stays readable.
    third = user_message("three")
    with loaded.open_transcript() as w:
        w.append(third)
    again = load_transcript(path)
    assert again.messages == [first, third]


def _crashed_during_tool(path: Path) -> tuple[list[Any], ToolUseBlock, ToolUseBlock]:
    t1 = ToolUseBlock(id="toolu_1", name="Bash", input={"command": "sleep 30"})
    t2 = ToolUseBlock(id="toolu_2", name="Read", input={"file_path": "x"})
    # A streamed response split over two assistant messages sharing one API id.
    a1 = assistant_message([TextBlock("running"), t1], message_id="msg_1", stop_reason=None)
    a2 = assistant_message([t2], message_id="msg_1", stop_reason="tool_use")
    msgs: list[Message] = [user_message("please run"), a1, a2]
    with Transcript(path) as w:
        for m in msgs:
            w.append(m)
    return msgs, t1, t2


def test_orphan_tool_uses_get_error_results_in_memory_and_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    msgs, _, _ = _crashed_during_tool(path)
    loaded = load_transcript(path)
    assert loaded.messages[:3] == msgs
    fix = loaded.messages[3]
    assert isinstance(fix, UserMessage) and not isinstance(fix.content, str)
    assert [(b.tool_use_id, b.is_error, b.content) for b in fix.content] == [  # type: ignore[union-attr]
        ("toolu_1", True, INTERRUPTED_TOOL_RESULT),
        ("toolu_2", True, INTERRUPTED_TOOL_RESULT),
    ]
    last = json.loads(path.read_text().splitlines()[-1])
    assert last["repair"] is True and last["parent_uuid"] == msgs[2].uuid
    # Idempotent: a second load finds the repair on disk and adds nothing.
    again = load_transcript(path)
    assert again.messages == loaded.messages and again.repaired == ()
    assert len(path.read_text().splitlines()) == 4


def test_orphan_in_the_middle_is_repaired_in_place(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    t1 = ToolUseBlock(id="toolu_1", name="Bash", input={"command": "x"})
    a1 = assistant_message([t1], stop_reason="tool_use")
    later: list[Message] = [user_message("never mind, do this"), assistant_message("ok")]
    written: list[Message] = [user_message("go"), a1, *later]
    with Transcript(path) as w:
        for m in written:
            w.append(m)
    loaded = load_transcript(path)
    assert loaded.messages[1] == a1
    assert isinstance(loaded.messages[2], UserMessage)
    assert loaded.messages[3:] == later
    assert load_transcript(path).messages == loaded.messages


def test_answered_tool_use_is_not_repaired(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    t1 = ToolUseBlock(id="toolu_1", name="Bash", input={"command": "x"})
    msgs: list[Message] = [
        user_message("go"),
        assistant_message([t1]),
        tool_result_message("toolu_1", "ok"),
    ]
    with Transcript(path) as w:
        for m in msgs:
            w.append(m)
    assert load_transcript(path).messages == msgs
    assert load_transcript(path).repaired == ()


def test_repaired_array_normalizes_into_a_valid_request(tmp_path: Path) -> None:
    import queryloop.messages as qm

    normalize = getattr(qm, "normalize_messages_for_api", None)
    validate = getattr(qm, "validate_api_request", None)
    if normalize is None or validate is None:
        pytest.skip("queryloop.messages.normalize_messages_for_api is not there yet")
    path = tmp_path / "s.jsonl"
    _crashed_during_tool(path)
    loaded = load_transcript(path)
    tools = [
        {"name": n, "description": n, "input_schema": {"type": "object"}} for n in ("Bash", "Read")
    ]
    api = normalize(loaded.messages, tools, thinking_enabled=False)
    request: dict[str, Any] = {
        "model": "m",
        "max_tokens": 100,
        "messages": list(api),
        "tools": tools,
    }
    assert validate(request) == []
    results = [
        b["tool_use_id"]
        for msg in request["messages"]
        for b in msg["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    assert results == ["toolu_1", "toolu_2"]
    # Without the repair the same history would need pairing repair again at request time.
    last = loaded.messages[-1]
    assert isinstance(last, UserMessage) and not isinstance(last.content, str)
    assert isinstance(last.content[0], ToolResultBlock)
