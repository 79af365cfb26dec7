"""Autocompact: the summary call, the new history, restoration and the circuit breaker."""

from __future__ import annotations

from pathlib import Path

import pytest
from compact_testkit import FakeSummarizer, all_text, assert_valid, history, tool_round

from queryloop.compact import (
    AutoCompactTracking,
    CompactionError,
    RestoreContext,
    compact_conversation,
)
from queryloop.compact.prompt import build_compact_prompt, format_summary
from queryloop.messages import (
    AssistantMessage,
    AttachmentMessage,
    Message,
    SystemMessage,
    SystemSubtype,
    ToolUseBlock,
    UserMessage,
    assistant_message,
    attachment_message,
    tool_result_message,
    user_message,
)

FACT = "The secret code is KIWI-42."


def _session(tmp_path: Path) -> list[Message]:
    src = tmp_path / "parser.py"
    src.write_text("def parse():\n    return 'fresh from disk'\n")
    read = ToolUseBlock(id="toolu_read", name="Read", input={"file_path": str(src)})
    todo = ToolUseBlock(
        id="toolu_todo",
        name="TodoWrite",
        input={"todos": [{"content": "fix parse()", "status": "in_progress"}]},
    )
    msgs: list[Message] = [user_message(f"Fix the parser. {FACT}")]
    msgs += [AssistantMessage(content=(read,)), tool_result_message("toolu_read", "old content")]
    msgs += [AssistantMessage(content=(todo,)), tool_result_message("toolu_todo", "updated")]
    msgs += [assistant_message("Done reading."), user_message("Also keep the public API stable.")]
    for n in range(2, 12):
        msgs += tool_round(n)
    msgs += tool_round(12, tool="Bash", result="LATEST RESULT 12345")
    return msgs


async def test_new_history_layout_and_restored_context(tmp_path: Path) -> None:
    msgs = _session(tmp_path)
    fake = FakeSummarizer("<analysis>thinking</analysis><summary>1. Fix the parser</summary>")
    result = await compact_conversation(
        msgs,
        summarize=fake,
        trigger="auto",
        custom_instructions=None,
        restore=RestoreContext(keep_tail_tokens=500),
    )
    new = result.messages
    assert isinstance(new[0], SystemMessage) and new[0].subtype is SystemSubtype.COMPACT_BOUNDARY
    assert new[0].metadata["trigger"] == "auto" and new[0].metadata["pre_tokens"] > 0
    summary = new[1]
    assert isinstance(summary, UserMessage) and summary.is_compact_summary
    assert "Fix the parser" in str(summary.content) and "thinking" not in str(summary.content)
    files = [m for m in new if isinstance(m, AttachmentMessage) and m.attachment.type == "file"]
    assert files and "fresh from disk" in files[0].attachment.data["content"]
    todos = [m for m in new if isinstance(m, AttachmentMessage) and m.attachment.type == "todo"]
    assert todos[0].attachment.data["todos"][0]["content"] == "fix parse()"
    text = all_text(new)
    assert FACT in text and "Also keep the public API stable." in text
    assert "LATEST RESULT 12345" in text  # the latest tool result survives verbatim
    assert result.post_tokens < result.pre_tokens
    assert_valid(new)


async def test_summary_request_sees_the_whole_history_and_the_prompt(tmp_path: Path) -> None:
    msgs = _session(tmp_path)
    fake = FakeSummarizer()
    await compact_conversation(
        msgs,
        summarize=fake,
        trigger="manual",
        custom_instructions="Focus on the parser tests.",
        restore=RestoreContext(),
    )
    given, prompt = fake.calls[0]
    assert given == msgs and FACT in str(given[0])
    for section in ("Primary Request and Intent", "All User Messages", "Pending Tasks"):
        assert section in prompt
    assert "Current Work" in prompt and "Next Step" in prompt and "verbatim" in prompt
    assert prompt.endswith("Focus on the parser tests.")


async def test_fact_survives_two_compactions_in_a_row(tmp_path: Path) -> None:
    msgs = _session(tmp_path)
    fake = FakeSummarizer("<summary>a summary that forgot everything</summary>")
    restore = RestoreContext(keep_tail_tokens=0)
    first = await compact_conversation(
        msgs, summarize=fake, trigger="auto", custom_instructions=None, restore=restore
    )
    grown = [*first.messages, *[m for n in range(40, 45) for m in tool_round(n)]]
    second = await compact_conversation(
        grown, summarize=fake, trigger="auto", custom_instructions=None, restore=restore
    )
    assert FACT in all_text(second.messages)
    assert_valid(second.messages)


async def test_a_prompt_queued_while_the_agent_worked_survives_compaction(
    tmp_path: Path,
) -> None:
    """The user's words typed while a turn ran reach the model as a `queued_command`
    attachment; they are the user's own message and are carried like one (before, the
    summary was the only chance, and a scripted one that forgets them lost them)."""
    msgs = _session(tmp_path)
    queued = "Also: deploy only in the Thursday window DW-0400."
    at = 6  # early: the verbatim tail does not reach back to it
    msgs.insert(at, attachment_message("queued_command", prompt=queued))
    fake = FakeSummarizer("<summary>a summary that forgot everything</summary>")
    restore = RestoreContext(keep_tail_tokens=0)
    first = await compact_conversation(
        msgs, summarize=fake, trigger="auto", custom_instructions=None, restore=restore
    )
    assert queued in all_text(first.messages)
    grown = [*first.messages, *[m for n in range(40, 45) for m in tool_round(n)]]
    second = await compact_conversation(
        grown, summarize=fake, trigger="auto", custom_instructions=None, restore=restore
    )
    assert queued in all_text(second.messages)  # through the boundary's metadata
    assert_valid(second.messages)


async def test_empty_summary_is_a_compaction_error() -> None:
    with pytest.raises(CompactionError):
        await compact_conversation(
            history(3),
            summarize=FakeSummarizer("   "),
            trigger="auto",
            custom_instructions=None,
            restore=RestoreContext(),
        )


def test_circuit_breaker_opens_after_three_failures_and_resets() -> None:
    t = AutoCompactTracking()
    for _ in range(2):
        t = t.failed()
    assert not t.circuit_open
    t = t.failed()
    assert t.circuit_open
    t = t.succeeded()
    assert not t.circuit_open and t.compacted and t.turn_counter == 0
    assert t.next_turn().turn_counter == 1


def test_prompt_helpers() -> None:
    assert "Additional instructions" in build_compact_prompt("x")
    assert format_summary("<analysis>a</analysis>\n<summary>b</summary>") == "Summary:\nb"
    assert format_summary("plain text") == "plain text"
