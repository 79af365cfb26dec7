"""The interrupted-call vocabulary: one builder, a flag persisted in transcripts and never sent
to the API, and a legacy reader for transcripts written before the flag."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from queryloop.messages import (
    Interruption,
    Message,
    UserMessage,
    answer_unanswered,
    assistant_message,
    interrupted_result,
    interrupted_result_message,
    message_from_dict,
    message_to_dict,
    normalize_messages_for_api,
    result_ids,
    tool_result_message,
    user_message,
)
from queryloop.messages.blocks import ToolResultBlock, ToolUseBlock
from queryloop.messages.interruption import legacy_interruption

# The texts earlier versions wrote, exactly (what the model was told must not drift).
OLD_TEXTS = {
    "Tool call was interrupted by the user before it finished.": Interruption.ABORTED,
    "[Request interrupted by user for tool use]": Interruption.TOOLS_ABORTED,
    "Tool call was interrupted before it finished.": Interruption.CANCELLED,
    "[Tool execution was interrupted; the session was resumed]": Interruption.RESUMED,
    "mcp__lookup__append was interrupted by the user": Interruption.TOOL_STOPPED,
}

ids = st.text(alphabet="abcdefghij0123456789_", min_size=1, max_size=8).map(lambda s: f"toolu_{s}")
whys = st.sampled_from(Interruption)
names = st.sampled_from(["Read", "Bash", "mcp__lookup__append"])


def _result(message: UserMessage) -> ToolResultBlock:
    assert not isinstance(message.content, str)
    block = message.content[0]
    assert isinstance(block, ToolResultBlock)
    return block


def _legacy_record(tool_use_id: str, text: str, *, is_error: bool = True) -> dict[str, Any]:
    """A user message as an earlier version stored it: no `interrupted` key."""
    data = message_to_dict(tool_result_message(tool_use_id, text, is_error=is_error))
    assert "interrupted" not in data["content"][0]
    return data


def test_the_texts_are_what_earlier_versions_told_the_model() -> None:
    for text, why in OLD_TEXTS.items():
        assert why.text("mcp__lookup__append") == text
    assert Interruption.UNPAIRED.text() == "Tool call was interrupted before it produced a result."


@given(ids, whys, names)
def test_an_interrupted_result_is_a_flagged_error_with_its_words(
    tid: str, why: Interruption, name: str
) -> None:
    block = interrupted_result(tid, why, name)
    assert (block.tool_use_id, block.content, block.is_error, block.interrupted) == (
        tid,
        why.text(name),
        True,
        why,
    )
    assert _result(interrupted_result_message(tid, why, name)) == block


@given(ids, whys, names)
def test_the_flag_survives_the_transcript(tid: str, why: Interruption, name: str) -> None:
    message = interrupted_result_message(tid, why, name)
    stored = json.loads(json.dumps(message_to_dict(message)))
    assert stored["content"][0]["interrupted"] == why.value
    assert message_from_dict(stored) == message


@given(ids, whys, names)
def test_the_flag_never_reaches_the_api(tid: str, why: Interruption, name: str) -> None:
    messages: list[Message] = [
        user_message("go"),
        assistant_message([ToolUseBlock(tid, name, {})], stop_reason="tool_use"),
        interrupted_result_message(tid, why, name),
    ]
    request = normalize_messages_for_api(messages, thinking=None)
    assert '"interrupted"' not in json.dumps(request)
    result = request[-1]["content"][0]
    assert result == {
        "type": "tool_result",
        "tool_use_id": tid,
        "content": why.text(name),
        "is_error": True,
    }


def test_old_transcripts_are_read_with_the_flag() -> None:
    for text, why in OLD_TEXTS.items():
        assert _result(message_from_dict(_legacy_record("toolu_1", text))).interrupted is why  # type: ignore[arg-type]


def test_the_legacy_reader_knows_only_the_old_stand_ins() -> None:
    assert (
        legacy_interruption("Tool call was interrupted before it finished.", is_error=False) is None
    )
    assert legacy_interruption("Read was interrupted by the user and more", is_error=True) is None
    assert legacy_interruption("the file was interrupted by the user", is_error=True) is None
    assert legacy_interruption(Interruption.UNPAIRED.text(), is_error=True) is None  # wire only
    assert legacy_interruption(("text",), is_error=True) is None
    plain = message_from_dict(_legacy_record("toolu_1", "some output", is_error=True))
    assert _result(plain).interrupted is None  # type: ignore[arg-type]


@st.composite
def _uses_and_answered(draw: st.DrawFn) -> tuple[list[ToolUseBlock], set[str]]:
    tids = draw(st.lists(ids, max_size=8))  # repeats allowed: answered once
    uses = [ToolUseBlock(tid, draw(names), {}) for tid in tids]
    answered = set(draw(st.lists(st.sampled_from(tids), max_size=len(tids)))) if tids else set()
    return uses, answered


@given(_uses_and_answered(), whys)
def test_answer_unanswered_answers_each_open_call_once(
    case: tuple[list[ToolUseBlock], set[str]], why: Interruption
) -> None:
    uses, answered = case
    answers = answer_unanswered(uses, answered, why)
    expected = list(dict.fromkeys(u.id for u in uses if u.id not in answered))
    assert [_result(m).tool_use_id for m in answers] == expected
    assert all(_result(m).interrupted is why and _result(m).is_error for m in answers)
    assert result_ids(answers) | answered >= {u.id for u in uses}
    assert answer_unanswered(uses, answered | result_ids(answers), why) == []
