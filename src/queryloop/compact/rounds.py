"""API rounds: where the message array may be cut without breaking tool_use/tool_result pairing.

A *round* starts at an assistant response and runs until the next one; the tool results of a
response live in the same round. A cut index ``i`` is *safe* when no tool_use sits before
``i`` while its tool_result sits at or after it, and ``messages[i]`` starts a new response
(not the second half of a streamed response split over messages sharing one id). Every stage
that removes or replaces a span of history does so only between safe round starts, so the
array it produces always normalizes into a valid request.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..messages.blocks import ToolResultBlock, ToolUseBlock
from ..messages.types import AssistantMessage, Message, UserMessage


def _crossing_cuts(messages: Sequence[Message]) -> list[int]:
    """diff[i] > 0 means some tool pair straddles a cut before index i."""
    uses: dict[str, int] = {}
    diff = [0] * (len(messages) + 2)
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    uses.setdefault(block.id, index)
        elif isinstance(message, UserMessage) and not isinstance(message.content, str):
            for part in message.content:
                if isinstance(part, ToolResultBlock) and part.tool_use_id in uses:
                    start = uses[part.tool_use_id]
                    if start < index:
                        diff[start + 1] += 1
                        diff[index + 1] -= 1
    running, covered = 0, []
    for index in range(len(messages) + 1):
        running += diff[index]
        covered.append(running)
    return covered


def round_starts(messages: Sequence[Message]) -> list[int]:
    """Indices of assistant messages before which the array may be cut safely, ascending."""
    covered = _crossing_cuts(messages)
    starts: list[int] = []
    previous: AssistantMessage | None = None
    for index, message in enumerate(messages):
        if not isinstance(message, AssistantMessage):
            if isinstance(message, UserMessage):
                previous = None
            continue
        continues = (
            previous is not None
            and bool(message.message_id)
            and previous.message_id == message.message_id
        )
        if not continues and covered[index] == 0:
            starts.append(index)
        previous = message
    return starts


def head_end(messages: Sequence[Message], keep_head: int = 1) -> int:
    """The index where the protected head ends: the first round start at or after
    `keep_head` messages (the first user message and its context are always kept)."""
    for start in round_starts(messages):
        if start >= max(1, keep_head):
            return start
    return len(messages)


def tool_names_by_id(messages: Sequence[Message]) -> dict[str, str]:
    """tool_use id -> tool name, for every tool call in `messages`."""
    names: dict[str, str] = {}
    for message in messages:
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    names[block.id] = block.name
    return names
