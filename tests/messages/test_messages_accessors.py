"""Readers of a message array shared by the session's timing records and the traces."""

from __future__ import annotations

from queryloop.messages import (
    assistant_message,
    tool_result_for,
    user_message,
)
from queryloop.messages.blocks import ToolResultBlock
from queryloop.messages.types import Message


def test_tool_result_for_finds_the_first_result_answering_the_call() -> None:
    first = ToolResultBlock(tool_use_id="b", content="first")
    again = ToolResultBlock(tool_use_id="b", content="duplicate")
    other = ToolResultBlock(tool_use_id="a", content="other", is_error=True)
    messages: list[Message] = [
        user_message("tool_result b is only words here"),
        assistant_message("no results in an assistant message"),
        user_message([other, first]),
        user_message([again]),
    ]
    assert tool_result_for("b", messages) is first
    assert tool_result_for("a", messages) is other
    assert tool_result_for("c", messages) is None
    assert tool_result_for("b", []) is None
