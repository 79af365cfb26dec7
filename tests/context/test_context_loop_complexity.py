"""Per-iteration work of the query loop does not grow with the history.

A real `Agent` (request builder, incremental normalization, cache breakpoints, compaction
preprocess, attachment providers, tool execution) runs on a scripted model. The number of
Python function calls made inside queryloop (the model and its token counting excluded) for
K extra loop iterations is measured at n and 4n turns of history: it must not grow with n.
A deterministic count, not a timing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

from queryloop import Agent, tool
from queryloop.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ToolUseBlock,
    Usage,
    attachment_message,
    tool_result_message,
    user_message,
)
from queryloop.testing import ScriptedProvider, text, tool_use, turn

EXCLUDED = ("/queryloop/testing/", "/queryloop/providers/")


@tool(read_only=True, concurrency_safe=True)
def noop(n: int) -> str:
    """Do nothing.

    Args:
        n: A number.
    """
    return "ok"


def _history(turns: int) -> list[Message]:
    out: list[Message] = [user_message("Start the task.")]
    for i in range(turns):
        tid = f"toolu_hist_{i:06d}"
        out.append(
            AssistantMessage(
                content=(TextBlock(text=f"Step {i}."), ToolUseBlock(id=tid, name="noop", input={})),
                message_id=f"msg_hist_{i}",
                stop_reason="tool_use",
                usage=Usage(input_tokens=50, cache_read_input_tokens=30 * i, output_tokens=40),
            )
        )
        out.append(tool_result_message(tid, "output line\n" * 5))
        out.append(attachment_message("text", content=f"reminder {i}"))
    return out


async def _calls(tmp_path: Path, turns: int, iterations: int) -> int:
    """queryloop function calls made by one prompt running `iterations` tool calls."""
    script: list[Any] = [turn(tool_use("noop", {"n": k})) for k in range(iterations)]
    script.append(turn(text("done")))
    agent = Agent(
        "claude-sonnet-5-5",
        provider=ScriptedProvider(script),
        tools=[noop],
        builtin_tools=False,
        cwd=tmp_path,
        home=tmp_path / "home",
        persist=False,
        permission_mode="bypassPermissions",
        history=_history(turns),
    )
    await agent.start()
    count = 0

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal count
        if event == "call":
            name = frame.f_code.co_filename
            if "/queryloop/" in name and not any(x in name for x in EXCLUDED):
                count += 1

    sys.setprofile(profile)
    try:
        result = await agent.run("Go on.")
    finally:
        sys.setprofile(None)
    await agent.aclose()
    assert result.terminal.value == "completed", result.detail
    return count


async def _per_iteration(tmp_path: Path, turns: int) -> float:
    """Calls per extra iteration: the one-time work of the first request cancels out."""
    few = await _calls(tmp_path, turns, 4)
    many = await _calls(tmp_path, turns, 12)
    return (many - few) / 8


async def test_loop_iteration_work_does_not_grow_with_history(tmp_path: Path) -> None:
    small = await _per_iteration(tmp_path, 50)
    large = await _per_iteration(tmp_path, 200)
    # Work proportional to the history would make this ~4x; allow noise, not growth.
    assert large < 1.3 * small, (small, large)
