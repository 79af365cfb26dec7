"""Benchmark: the query loop's own time per iteration, model and tool time excluded.

A real `Agent` (request builder, normalization, cache breakpoints, compaction preprocess,
attachments, streaming tool executor) runs on an in-process scripted model over histories of
10, 100 and 1000 prior turns. Each prompt makes the model call a no-op tool ITERATIONS times
and then answer. Time spent inside the model's stream is measured and subtracted; the tool
does nothing. Reported: framework milliseconds per iteration, with the transcript on disk
(fsync per message) and without, averaged over the whole run (the first request of a resumed
session normalizes the whole history once), and the steady per-iteration cost (the extra
time of twice as many iterations, without the transcript). Goal: under 2 ms per iteration
at 1000 turns; per-iteration work proportional to what is new.

    python bench/loop_overhead.py [--turns 10,100,1000] [--iterations 20]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

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
from queryloop.providers.base import ModelRequest, StreamEvent
from queryloop.providers.scripted import ScriptedProvider
from queryloop.testing import text, tool_use, turn

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


class TimedProvider:
    """Wraps a provider and adds up the time spent inside its stream (the model's time)."""

    name = "timed"

    def __init__(self, inner: ScriptedProvider) -> None:
        self.inner = inner
        self.seconds = 0.0

    async def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        iterator = self.inner.stream(request, abort).__aiter__()
        while True:
            started = time.perf_counter()
            try:
                event = await iterator.__anext__()
            except StopAsyncIteration:
                self.seconds += time.perf_counter() - started
                return
            self.seconds += time.perf_counter() - started
            yield event


async def measure(turns: int, iterations: int, persist: bool) -> float:
    """Framework milliseconds per loop iteration (the whole run, first iteration included)."""
    return await framework_ms(turns, iterations, persist) / (iterations + 1)


async def framework_ms(turns: int, iterations: int, persist: bool) -> float:
    """Framework milliseconds of one run of `iterations` tool calls plus the answer."""
    script: list[Any] = [turn(tool_use("noop", {"n": k})) for k in range(iterations)]
    script.append(turn(text("done")))
    provider = TimedProvider(ScriptedProvider(script))
    with tempfile.TemporaryDirectory() as tmp:
        agent = Agent(
            "claude-sonnet-5-5",
            provider=provider,
            tools=[noop],
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
