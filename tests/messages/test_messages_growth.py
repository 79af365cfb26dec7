"""normalize_messages_for_api grows linearly (ratio check with a wide margin, no absolute times)."""

from __future__ import annotations

import time

from queryloop.messages import (
    AssistantMessage,
    Attachment,
    AttachmentMessage,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    normalize_messages_for_api,
)

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def history(turns: int) -> list[Message]:
    out: list[Message] = [UserMessage(content="go", uuid="u", timestamp="t")]
    for i in range(turns):
        out += [
            AttachmentMessage(
                attachment=Attachment("text", {"content": f"c{i}"}), uuid=f"a{i}", timestamp="t"
            ),
            AssistantMessage(
                content=(TextBlock(text=f"step {i}"),),
                message_id=f"m{i}",
                uuid=f"x{i}",
                timestamp="t",
            ),
            AssistantMessage(
                content=(ToolUseBlock(id=f"t{i}", name="Bash"),),
                message_id=f"m{i}",
                uuid=f"y{i}",
                timestamp="t",
            ),
            UserMessage(
                content=(ToolResultBlock(tool_use_id=f"t{i}", content="x" * 2000),),
                uuid=f"r{i}",
                timestamp="t",
            ),
        ]
    return out


def best_time(messages: list[Message], repeat: int = 5) -> float:
    best = float("inf")
    for _ in range(repeat):
        # CPU time of this process: other tests running in parallel do not inflate it.
        start = time.process_time()
        normalize_messages_for_api(messages, TOOLS, thinking_enabled=False)
        best = min(best, time.process_time() - start)
    return best


def test_four_times_the_history_takes_well_under_eight_times_as_long() -> None:
    small, large = history(500), history(2000)
    best_time(small, 1)  # warm up
    ratio = best_time(large) / best_time(small)
    # Linear is 4; quadratic would be 16. The margin absorbs a busy machine.
    assert ratio < 8, ratio
