"""Tombstone reasons: written from `TombstoneReason`, kept as text in transcripts, so a
transcript written by an earlier version (or by anything else) with reasons in its own words
still loads, and the reasons queryloop recognises are recognised when read back from disk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from queryloop.messages import TombstoneMessage, TombstoneReason, tombstone, user_message
from queryloop.messages.serialization import message_from_dict
from queryloop.report import read_timeline
from queryloop.report.model import EventKind
from queryloop.session import Transcript, load_transcript


def _record(message: dict[str, Any], parent: str | None = None) -> str:
    return json.dumps({"record": "message", "session_id": "old", "parent_uuid": parent,
                       "message": message}) + "\n"  # fmt: skip


def _old_transcript(path: Path, reasons: list[str | None]) -> list[str]:
    """A transcript as an earlier version wrote it: each prompt voided by a tombstone whose
    `reason` is the given free text (None: no `reason` key at all). Returns the kept uuids."""
    lines: list[str] = []
    kept: list[str] = []
    for index, reason in enumerate(reasons):
        voided = f"u-voided-{index}"
        lines.append(_record({"type": "user", "uuid": voided,
                              "timestamp": f"2024-05-01T10:00:{index:02d}+00:00",
                              "content": "a prompt later voided"}))  # fmt: skip
        stone: dict[str, Any] = {"type": "tombstone", "uuid": f"t-{index}",
                                 "timestamp": f"2024-05-01T10:00:{index:02d}.5+00:00",
                                 "target_uuid": voided}  # fmt: skip
        if reason is not None:
            stone["reason"] = reason
        lines.append(_record(stone, parent=voided))
        kept.append(f"u-kept-{index}")
        lines.append(_record({"type": "user", "uuid": kept[-1],
                              "timestamp": f"2024-05-01T10:00:{index:02d}.7+00:00",
                              "content": "kept"}))  # fmt: skip
    path.write_text("".join(lines))
    return kept


def test_free_text_reasons_from_an_earlier_version_load(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    reasons = ["fallback", "the user undid this", "", None, "stream interrupted"]
    kept = _old_transcript(path, reasons)
    loaded = load_transcript(path)
    assert loaded.problems == []
    assert [m.uuid for m in loaded.messages] == kept  # every tombstone applied
    stones = [json.loads(line)["message"] for line in path.read_text().splitlines()[1::3]]
    decoded = [message_from_dict(data) for data in stones]
    assert all(isinstance(m, TombstoneMessage) for m in decoded)
    assert [m.reason for m in decoded if isinstance(m, TombstoneMessage)] == [
        "fallback",
        "the user undid this",
        "",
        "",
        "stream interrupted",
    ]


def test_reasons_are_written_as_their_plain_text_and_read_back_equal(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    voided = [user_message(reason.name) for reason in TombstoneReason]
    with Transcript(path) as writer:
        for message, reason in zip(voided, TombstoneReason, strict=True):
            writer.append(message)
            writer.append(tombstone(message.uuid, reason))
    written = [json.loads(line)["message"] for line in path.read_text().splitlines()]
    assert [m["reason"] for m in written if m["type"] == "tombstone"] == [
        "model fallback",
        "stream interrupted",
        "max_output_tokens_escalate",
        "interrupted call redone",
        "rewind",
    ]  # the words earlier versions wrote: changing one breaks reading their transcripts
    assert load_transcript(path).messages == []


def test_the_report_recognises_a_stream_retry_read_from_an_old_transcript(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.jsonl"
    _old_transcript(path, ["stream interrupted", "something else entirely", None])
    timeline = read_timeline(path)
    recoveries = [e for e in timeline.main.events if e.kind is EventKind.RECOVERY]
    assert [(e.label, e.detail) for e in recoveries] == [("stream_retry", "stream interrupted")]
