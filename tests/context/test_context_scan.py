"""`attachments_of`: the incremental scan equals the full scan, whatever the history does."""

from __future__ import annotations

from queryloop.context.scan import attachments_of
from queryloop.messages import AttachmentMessage, Message, attachment_message, user_message


def _full(messages: list[Message], kind: str) -> list[AttachmentMessage]:
    return [m for m in messages if isinstance(m, AttachmentMessage) and m.attachment.type == kind]


def test_incremental_scan_equals_full_scan_on_append_replace_and_compaction() -> None:
    msgs: list[Message] = [user_message("go")]
    for i in range(30):
        msgs = [*msgs, user_message(f"p{i}"), attachment_message("date_change", date=f"d{i}")]
        assert attachments_of(msgs, "date_change") == _full(msgs, "date_change")
    # An edited history (a message replaced in the middle) is rescanned.
    edited = [*msgs[:5], user_message("other"), *msgs[6:]]
    assert attachments_of(edited, "date_change") == _full(edited, "date_change")
    # Compaction drops the old attachments: they are gone from the answer too.
    compacted = [user_message("summary"), *msgs[-2:]]
    assert attachments_of(compacted, "date_change") == _full(compacted, "date_change")
    assert attachments_of(msgs[:1], "date_change") == []
    assert attachments_of([], "date_change") == []
    # Callers get fresh lists: modifying one does not change the index.
    got = attachments_of(msgs, "date_change")
    got.clear()
    assert attachments_of(msgs, "date_change") == _full(msgs, "date_change")


def test_breakpoint_counter_equals_full_count() -> None:
    from queryloop.context.cache import BreakpointCounter, count_breakpoints

    counter = BreakpointCounter()
    msgs: list[dict[str, object]] = [
        {"role": "user", "content": [{"type": "text", "text": "a"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "b", "cache_control": {}}]},
    ]
    assert counter.count(msgs) == count_breakpoints((), msgs) == 1
    msgs = [
        *msgs,
        {"role": "user", "content": [{"type": "text", "text": "c", "cache_control": {}}]},
    ]
    assert counter.count(msgs) == count_breakpoints((), msgs) == 2
    msgs = [msgs[0], {"role": "assistant", "content": "plain"}, msgs[2]]
    assert counter.count(msgs) == count_breakpoints((), msgs) == 1
    assert counter.count([]) == 0
