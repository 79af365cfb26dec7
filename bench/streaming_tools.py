"""Benchmark: what streaming tool execution saves.

The model streams three tool calls 0.6 s apart (then 0.6 s more of text); each tool takes
1 s. Without streaming execution the tools start when the message is complete; with it, each
starts as soon as its tool_use block is complete. Prints when the last tool finished,
measured from the start of the response, for both. (The reference system measured 0.85 s
worse than ideal on this shape.)

    python bench/streaming_tools.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from queryloop import tool
from queryloop.abort import AbortSignal
from queryloop.loop import QueryParams, query
from queryloop.messages import (
    Message,
    TextBlock,
    ToolUseBlock,
    Usage,
    normalize_messages_for_api,
    user_message,
)
from queryloop.providers.base import (
    BlockComplete,
    MessageComplete,
    MessageDelta,
    MessageStart,
    ModelRequest,
    ModelResponse,
    StreamEvent,
)
from queryloop.tools.base import ToolContext

GAP = 0.6
TOOL_SECONDS = 1.0
finished: list[float] = []


@tool(read_only=True, concurrency_safe=True)
async def slow(name: str) -> str:
    """Take a second.

    Args:
        name: A label.
    """
    await asyncio.sleep(TOOL_SECONDS)
    finished.append(time.perf_counter())
    return f"{name} done"


class PacedModel:
    """Streams three tool calls GAP seconds apart, then text; answers 'done' afterwards."""

    name = "paced"

    def __init__(self) -> None:
        self.calls = 0

    async def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        yield MessageStart(message_id=f"m{self.calls}", model=request.model, usage=Usage())
        blocks: list[TextBlock | ToolUseBlock] = []
        if self.calls == 1:
            for i in range(3):
                await asyncio.sleep(GAP)
                block = ToolUseBlock(id=f"toolu_{i}", name="slow", input={"name": str(i)})
                blocks.append(block)
                yield BlockComplete(index=i, block=block)
            await asyncio.sleep(GAP)
        blocks.append(TextBlock(text="done"))
        yield BlockComplete(index=len(blocks) - 1, block=blocks[-1])
        stop = "tool_use" if self.calls == 1 else "end_turn"
        yield MessageDelta(stop_reason=stop, usage=Usage(output_tokens=10))
        yield MessageComplete(
            ModelResponse(f"m{self.calls}", request.model, tuple(blocks), stop, Usage())
        )


class Builder:
    model = "m"

    def build(
        self, messages: Sequence[Message], *, max_tokens: int, model: str | None = None
    ) -> ModelRequest:
        return ModelRequest(
            model=model or self.model,
            messages=normalize_messages_for_api(messages),
            max_tokens=max_tokens,
        )


async def last_tool_done(streaming: bool) -> float:
    finished.clear()
    with tempfile.TemporaryDirectory() as tmp:
        params = QueryParams(
            provider=PacedModel(),
            request_builder=Builder(),
            tool_context=ToolContext(cwd=Path(tmp)),
            tools=[slow],
            streaming_tools=streaming,
        )
        started = time.perf_counter()
        async for _ in query(params, [user_message("go")]):
            pass
    return max(finished) - started


async def main() -> None:
    with_streaming = await last_tool_done(True)
    without = await last_tool_done(False)
    ideal = 3 * GAP + TOOL_SECONDS
    print(
        f"last tool finished after: streaming {with_streaming:.2f} s, "
        f"after the message {without:.2f} s (ideal {ideal:.2f} s)"
    )
    print(f"streaming execution saves {without - with_streaming:.2f} s on this shape")


if __name__ == "__main__":
    asyncio.run(main())
