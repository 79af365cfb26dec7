"""The stream-JSON wire format is an explicit table: every loop and provider event class has a
name written out, renaming a class changes nothing on the wire, and docs/cli.md lists the
same names. The CLI renders what the Agent reports and never reads its private state."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from queryloop.cli import stream_json
from queryloop.cli.stream_json import PROVIDER_EVENT_TYPES, event_record
from queryloop.loop.events import (
    CompactionEvent,
    CompactTrigger,
    LoopEvent,
    SideUsage,
    StreamDelta,
)
from queryloop.messages import compact_boundary, user_message
from queryloop.messages.usage import Usage
from queryloop.providers.base import StreamEvent, TextDelta

ROOT = Path(__file__).resolve().parents[2]


def test_every_event_class_has_an_explicit_entry() -> None:
    assert set(typing.get_args(StreamEvent)) == set(PROVIDER_EVENT_TYPES)
    assert set(typing.get_args(LoopEvent)) == set(stream_json._LOOP_RECORDS)


def test_renaming_a_class_does_not_change_the_wire() -> None:
    original = TextDelta.__name__
    TextDelta.__name__ = "RenamedTextChunk"
    try:
        record = event_record(StreamDelta(TextDelta(0, "hi")), "s")
    finally:
        TextDelta.__name__ = original
    assert record == {
        "type": "stream_event",
        "session_id": "s",
        "event": {"type": "text_delta", "index": 0, "text": "hi"},
    }


def test_docs_list_the_provider_event_names() -> None:
    docs = (ROOT / "docs" / "cli.md").read_text()
    section = docs[docs.index("`stream_event.event` is") :]
    section = section[: section.index("\n\n")]
    documented = re.findall(r"`([a-z_]+)` \(", section)
    assert documented == list(PROVIDER_EVENT_TYPES.values())


def test_a_compaction_is_a_compact_boundary_line_and_side_usage_is_not_a_line() -> None:
    boundary = compact_boundary("manual", 6256)
    event = CompactionEvent(
        (boundary, user_message("summary")),
        CompactTrigger.MANUAL,
        pre_tokens=6256,
        post_tokens=3311,
    )
    record = event_record(event, "s")
    assert record is not None
    assert (record["type"], record["subtype"]) == ("system", "compact_boundary")
    assert record["compact_metadata"] == {
        "trigger": "manual",
        "pre_tokens": 6256,
        "post_tokens": 3311,
    }
    assert record["message"]["uuid"] == boundary.uuid
    assert event_record(SideUsage("summary", "m", Usage(output_tokens=3)), "s") is None


def test_the_cli_does_not_reach_into_the_agents_private_state() -> None:
    private = re.compile(r"\bagent\._[a-z]|getattr\(\s*agent|_runtime\b")
    offenders = [
        f"{path.name}:{n}"
        for path in sorted((ROOT / "src" / "queryloop" / "cli").glob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if private.search(line)
    ]
    assert offenders == []
