"""Transcript writing and round trips."""

from __future__ import annotations

import json
from pathlib import Path

from queryloop.messages import (
    Message,
    ToolUseBlock,
    assistant_message,
    compact_boundary,
    tool_result_message,
    user_message,
)
from queryloop.messages.usage import Usage
from queryloop.session import (
    Transcript,
    find_session,
    latest_session,
    load_transcript,
    project_key,
    session_path,
)


def test_round_trip_keeps_every_message_and_parent_chain(tmp_path: Path) -> None:
    path = session_path("s1", tmp_path / "proj", home=tmp_path / "home")
    msgs: list[Message] = [
        user_message("fix it"),
        assistant_message([ToolUseBlock(id="t1", name="Read", input={"file_path": "a.py"})]),
        tool_result_message("t1", "print(1)"),
        assistant_message("done"),
    ]
    with Transcript(path, "s1") as writer:
        writer.start(model="m", cwd=str(tmp_path))
        for m in msgs:
            writer.append(m)
        writer.append_usage(Usage(input_tokens=10, output_tokens=5), cost_usd=0.25, model="m")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["record"] for r in records] == [
        "meta",
        "message",
        "message",
        "message",
        "message",
        "usage",
    ]
    parents = [r["parent_uuid"] for r in records if r["record"] == "message"]
    assert parents == [None, msgs[0].uuid, msgs[1].uuid, msgs[2].uuid]
    loaded = load_transcript(path)
    assert loaded.messages == msgs
    assert loaded.session_id == "s1"
    assert loaded.metadata["model"] == "m"
    assert loaded.cost_usd == 0.25 and loaded.usage.input_tokens == 10
    assert loaded.problems == [] and loaded.last_uuid == msgs[-1].uuid


def test_project_key_and_lookup(tmp_path: Path) -> None:
    home = tmp_path / "home"
    cwd = tmp_path / "my proj"
    cwd.mkdir()
    assert project_key(cwd) == "".join(c if c.isalnum() else "-" for c in str(cwd.resolve()))
    assert latest_session(cwd, home) is None
    older = session_path("aaaa1111", cwd, home)
    newer = session_path("aaaa2222", cwd, home)
    for p in (older, newer):
        with Transcript(p) as w:
            w.append(user_message("hi"))
    import os

    os.utime(older, (1_000_000, 1_000_000))
    assert latest_session(cwd, home) == newer
    assert find_session("aaaa2", cwd=cwd, home=home) == newer
    assert find_session("aaaa1111", home=home) == older
    assert find_session(str(older)) == older
    import pytest

    from queryloop.session import AmbiguousSessionError, SessionNotFoundError

    with pytest.raises(AmbiguousSessionError):
        find_session("aaaa", cwd=cwd, home=home)
    with pytest.raises(SessionNotFoundError):
        find_session("zzzz", cwd=cwd, home=home)


def test_reader_rebuilds_from_last_compact_boundary_and_applies_tombstones(
    tmp_path: Path,
) -> None:
    from queryloop.messages import tombstone

    path = tmp_path / "s.jsonl"
    early = user_message("old prompt")
    boundary = compact_boundary("auto", 1234)
    summary = user_message("summary of before", is_compact_summary=True)
    failed = assistant_message("half an answer")
    good = assistant_message("answer")
    with Transcript(path) as w:
        for m in (early, boundary, summary, failed, tombstone(failed.uuid, "fallback"), good):
            w.append(m)
    loaded = load_transcript(path)
    assert loaded.messages == [boundary, summary, good]


def test_unknown_records_and_duplicates_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    m = user_message("hi")
    with Transcript(path) as w:
        w.append(m)
        w.append_record({"record": "from_the_future", "x": 1})
        w.append(m)
    loaded = load_transcript(path)
    assert loaded.messages == [m]
    assert any("duplicate" in p for p in loaded.problems)
    assert any("from_the_future" in p for p in loaded.problems)
