"""Drafts: an assistant message written before a tool call it holds starts (issue 25, item 15).

The session writes the draft at once (`"partial": true`) and holds it in its array; the whole
message (the same uuid) takes its place in the array and in the transcript; a tombstone voids
it; a draft nothing superseded (a kill while the tool ran) loads as the message, repaired.
"""

from __future__ import annotations

import json
from pathlib import Path

from queryloop.loop.events import MessageDraft, MessageEvent
from queryloop.messages import tombstone, tool_result_message, user_message
from queryloop.messages.blocks import TextBlock, ToolUseBlock
from queryloop.messages.types import AssistantMessage, ProgressMessage
from queryloop.session import Session, Transcript, load_transcript

CALL = ToolUseBlock("toolu_1", "Bash", {"command": "make"})


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _session(tmp_path: Path) -> tuple[Session, Path]:
    path = tmp_path / "s.jsonl"
    return Session("s", transcript=Transcript(path, "s")), path


def test_the_whole_message_supersedes_its_draft(tmp_path: Path) -> None:
    session, path = _session(tmp_path)
    prompt = user_message("build it")
    session.append(prompt)
    draft = AssistantMessage(content=(CALL,), message_id="msg_1")
    session.apply(MessageDraft(draft))
    assert session.messages == (prompt, draft)  # held in the array while the tool runs
    session.apply(MessageEvent(ProgressMessage(tool_use_id="toolu_1", data={"line": "cc"})))
    whole = AssistantMessage(
        content=(CALL,), message_id="msg_1", stop_reason="tool_use", uuid=draft.uuid
    )
    session.apply(MessageEvent(whole))
    assert session.messages == (prompt, whole)
    result = tool_result_message("toolu_1", "built")
    session.apply(MessageEvent(result))
    records = [r for r in _records(path) if r["record"] == "message"]
    assert [r.get("partial", False) for r in records] == [False, True, False, False, False]
    # The whole message keeps its draft's parent (the prompt), not itself or the progress.
    assert records[1]["parent_uuid"] == records[3]["parent_uuid"] == prompt.uuid
    loaded = load_transcript(path)
    kept = [m for m in loaded.messages if not isinstance(m, ProgressMessage)]
    assert kept == [prompt, whole, result]
    assert loaded.problems == [] and loaded.repaired == ()


def test_a_draft_nothing_superseded_is_the_message_and_is_repaired(tmp_path: Path) -> None:
    session, path = _session(tmp_path)
    session.append(user_message("build it"))
    session.append(AssistantMessage(content=(TextBlock("Building."),), message_id="msg_1"))
    session.apply(MessageDraft(AssistantMessage(content=(CALL,), message_id="msg_1")))
    session.close()  # killed while the tool ran
    loaded = load_transcript(path)
    uses = [b for m in loaded.messages if isinstance(m, AssistantMessage) for b in m.content]
    assert CALL in uses
    assert len(loaded.repaired) == 1  # the call is answered: resume tells the model


def test_a_tombstone_voids_a_draft(tmp_path: Path) -> None:
    """A stream retried after a tool started: its draft is voided like its other blocks."""
    session, path = _session(tmp_path)
    session.append(user_message("build it"))
    draft = AssistantMessage(content=(CALL,), message_id="msg_1")
    session.apply(MessageDraft(draft))
    session.apply(MessageEvent(tombstone(draft.uuid, "stream interrupted")))
    assert [m.uuid for m in session.messages if m.uuid == draft.uuid] == []
    session.apply(MessageEvent(AssistantMessage(content=(TextBlock("Done."),), message_id="m2")))
    loaded = load_transcript(path)
    assert all(m.uuid != draft.uuid for m in loaded.messages) and loaded.repaired == ()


def test_a_second_copy_of_a_whole_message_is_still_dropped(tmp_path: Path) -> None:
    """Only a draft is superseded: a retried append of a whole message stays a duplicate."""
    path = tmp_path / "s.jsonl"
    first = AssistantMessage(content=(TextBlock("one"),), message_id="m")
    with Transcript(path, "s") as writer:
        writer.append(user_message("hi"))
        writer.append(first)
        writer.append(
            AssistantMessage(content=(TextBlock("two"),), message_id="m", uuid=first.uuid)
        )
    loaded = load_transcript(path)
    assert loaded.messages[-1] == first
    assert loaded.problems == ["1 duplicate message(s) dropped"]
