"""Benchmark: the query loop's own time per iteration, model and tool time excluded.

A real `Agent` (request builder, normalization, cache breakpoints, compaction preprocess,
attachments, streaming tool executor, transcript) runs on an in-process canned model over
histories of 10, 100 and 1000 prior turns. Each prompt makes the model call a no-op tool
ITERATIONS times and then answer; the model's time is subtracted and the tool does nothing.
Reported, in milliseconds per iteration: the whole run averaged, without and with the
transcript on disk (each message written as it is created, one fsync per prompt) — this
includes the one O(history) pass a fresh Agent's first request makes — and the steady cost
of an iteration in a running session (the extra time of twice as many iterations).
Goal: under 2 ms per iteration at 1000 turns; per-iteration work that does not grow with
the history.

    python bench/loop_overhead.py [--turns 10,100,1000] [--iterations 20]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from queryloop import Agent, tool
from queryloop.abort import AbortSignal
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
from queryloop.providers.base import (
    BlockComplete,
    MessageComplete,
    MessageDelta,
    MessageStart,
    ModelRequest,
    ModelResponse,
    StreamEvent,
)

RESULT = "some tool output line\n" * 40


@tool(read_only=True, concurrency_safe=True)
def noop(n: int) -> str:
    """Do nothing.

    Args:
        n: A number.
    """
    return "ok"


def history(turns: int) -> list[Message]:
    """`turns` realistic prior turns: tool call, ~1 KB result, an attachment, usage."""
    out: list[Message] = [user_message("Start the task.")]
    for i in range(turns):
        tid = f"toolu_hist_{i:06d}"
        out.append(
            AssistantMessage(
                content=(
                    TextBlock(text=f"Step {i}: reading."),
                    ToolUseBlock(id=tid, name="noop", input={"n": i}),
                ),
                message_id=f"msg_hist_{i}",
                stop_reason="tool_use",
                usage=Usage(input_tokens=50, cache_read_input_tokens=300 * i, output_tokens=40),
            )
        )
        out.append(tool_result_message(tid, RESULT))
        out.append(attachment_message("text", content=f"reminder {i}"))
    return out


class CannedModel:
    """An in-process model that answers from canned events and does no work per request
    (a scripted model that counts the request's tokens would add work that is not the
    loop's). Time inside its stream is added up anyway and subtracted."""

    name = "canned"

    def __init__(self, iterations: int) -> None:
        self.remaining = iterations
        self.seconds = 0.0
        self.calls = 0

    async def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        started = time.perf_counter()
        self.calls += 1
        if self.remaining > 0:
            self.remaining -= 1
            block: TextBlock | ToolUseBlock = ToolUseBlock(
                id=f"toolu_b_{self.calls:06d}", name="noop", input={"n": self.calls}
            )
            stop = "tool_use"
        else:
            block, stop = TextBlock(text="done"), "end_turn"
        usage = Usage(input_tokens=40, cache_read_input_tokens=300_000, output_tokens=20)
        events: list[StreamEvent] = [
            MessageStart(message_id=f"msg_b_{self.calls}", model=request.model, usage=usage),
            BlockComplete(index=0, block=block),
            MessageDelta(stop_reason=stop, usage=usage),
            MessageComplete(
                ModelResponse(f"msg_b_{self.calls}", request.model, (block,), stop, usage)
            ),
        ]
        self.seconds += time.perf_counter() - started
        for event in events:
            yield event


async def measure(turns: int, iterations: int, persist: bool) -> float:
    """Framework milliseconds per loop iteration (the whole run, first iteration included)."""
    return await framework_ms(turns, iterations, persist) / (iterations + 1)


async def framework_ms(turns: int, iterations: int, persist: bool) -> float:
    """Framework milliseconds of one run of `iterations` tool calls plus the answer."""
    provider = CannedModel(iterations)
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(
            "claude-sonnet-5-5",
            provider=provider,
            tools=[noop],
            builtin_tools=False,
            cwd=Path(tmp),
            home=Path(tmp) / "home",
            persist=persist,
            permission_mode="bypassPermissions",
            history=history(turns),
        )
        await agent.start()
        started = time.perf_counter()
        result = await agent.run("Go on.")
        elapsed = time.perf_counter() - started
        await agent.aclose()
    assert result.terminal.value == "completed", result.detail
    return (elapsed - provider.seconds) * 1000


async def steady_ms(turns: int, iterations: int) -> float:
    """Milliseconds per iteration once the session runs: the extra cost of `iterations`
    more iterations (a resumed session's first request normalizes the whole history once;
    this leaves that one-time cost out)."""
    short = min([await framework_ms(turns, iterations, False) for _ in range(3)])
    long = min([await framework_ms(turns, 2 * iterations, False) for _ in range(3)])
    return max(0.0, long - short) / iterations


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", default="10,100,1000")
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args()
    sizes = [int(s) for s in args.turns.split(",")]
    print(
        f"{'history turns':>14} {'ms/iter (no disk)':>18} {'ms/iter (transcript)':>21}"
        f" {'steady ms/iter':>15}"
    )
    rows = []
    for turns in sizes:
        memory = min([await measure(turns, args.iterations, False) for _ in range(3)])
        disk = min([await measure(turns, args.iterations, True) for _ in range(2)])
        steady = await steady_ms(turns, args.iterations)
        rows.append((turns, memory))
        print(f"{turns:>14} {memory:>18.3f} {disk:>21.3f} {steady:>15.3f}")
    if len(rows) > 1:
        (t0, m0), (t1, m1) = rows[0], rows[-1]
        print(f"growth: {t1 / t0:.0f}x history -> {m1 / m0:.1f}x time per iteration")


if __name__ == "__main__":
    asyncio.run(main())
