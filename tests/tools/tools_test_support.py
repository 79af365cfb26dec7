"""Helpers for the tools tests: run one call and look at its tool_result."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from queryloop.messages.blocks import TextBlock, ToolResultBlock, ToolUseBlock
from queryloop.messages.types import Message, UserMessage
from queryloop.tools import Tool, ToolContext, run_tool_call
from queryloop.tools.execution import CallOutcome


@dataclass
class Called:
    """The outcome of one tool call as a test sees it."""

    text: str
    is_error: bool
    block: ToolResultBlock
    messages: list[Message]
    outcome: CallOutcome


def is_tool_result(message: Message) -> bool:
    return (
        isinstance(message, UserMessage)
        and not isinstance(message.content, str)
        and any(isinstance(b, ToolResultBlock) for b in message.content)
    )


def result_block(message: Message) -> ToolResultBlock:
    assert isinstance(message, UserMessage) and not isinstance(message.content, str)
    block = message.content[0]
    assert isinstance(block, ToolResultBlock)
    return block


def block_text(block: ToolResultBlock) -> str:
    if isinstance(block.content, str):
        return block.content
    return "\n".join(b.text for b in block.content if isinstance(b, TextBlock))


async def call(
    tool: Tool,
    input: Mapping[str, Any],
    ctx: ToolContext,
    *,
    tools: Sequence[Tool] | None = None,
    name: str | None = None,
    **kwargs: Any,
) -> Called:
    """Run one call of `tool` through `run_tool_call` and return its tool_result."""
    block = ToolUseBlock(id="toolu_1", name=name or tool.name, input=dict(input))
    outcome = CallOutcome()
    messages = [
        m async for m in run_tool_call(block, tools or [tool], ctx, outcome=outcome, **kwargs)
    ]
    results = [m for m in messages if is_tool_result(m)]
    assert len(results) == 1, messages
    rb = result_block(results[0])
    assert rb.tool_use_id == "toolu_1"
    return Called(block_text(rb), rb.is_error, rb, messages, outcome)


async def wait_until(predicate: Callable[[], bool], attempts: int = 1000) -> None:
    """Poll observable state (every 10 ms, up to 10 s) until `predicate` holds."""
    for _ in range(attempts):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition never became true")
