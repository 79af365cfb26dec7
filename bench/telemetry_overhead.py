"""Benchmark: what tracing adds to one model request and one tool call.

The same synthetic loop events a request produces (request start, a streamed answer of
DELTAS text deltas, the response, its message, the transition) and one tool call's
start and finish go through a thread's trace (`queryloop.telemetry`), four ways:

- untraced: the events straight through, no trace at all (the floor);
- off: the session's `Telemetry` when no tracer provider exists (the default: what every
  Agent pays without OpenTelemetry configured);
- API no-op: OpenTelemetry's API with no SDK (its `NoOpTracer`: what a session pays when
  something made it trace but no SDK records);
- SDK: the OpenTelemetry SDK recording every span, exported to an in-memory exporter
  (what tracing costs in this process; the export itself runs in the SDK's thread).

Reported: microseconds per request (with its tool call) above the untraced floor.

    python bench/telemetry_overhead.py [--requests 3000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import AsyncIterator

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from queryloop.loop.events import (
    LoopEvent,
    MessageEvent,
    RequestStart,
    StreamDelta,
    TransitionEvent,
)
from queryloop.loop.reasons import Continue
from queryloop.messages import AssistantMessage, TextBlock, ToolUseBlock, Usage
from queryloop.messages.constructors import tool_result_message
from queryloop.providers.base import BlockStart, MessageComplete, ModelResponse, TextDelta
from queryloop.telemetry import Telemetry, ThreadTrace
from queryloop.telemetry.spans import OtelTelemetry

DELTAS = 50
MODEL = "claude-sonnet-5-5"


def request_events(n: int) -> list[LoopEvent]:
    """The loop events of one request whose answer streams in DELTAS text deltas."""
    usage = Usage(input_tokens=10, output_tokens=DELTAS, cache_read_input_tokens=1000)
    message = AssistantMessage(content=(TextBlock("x" * DELTAS),), stop_reason="tool_use")
    response = ModelResponse(f"msg_{n}", MODEL, message.content, "tool_use", usage)
    return [
        RequestStart(turn=n, model=MODEL),
        StreamDelta(BlockStart(0, "text")),
        *(StreamDelta(TextDelta(0, "x")) for _ in range(DELTAS)),
        StreamDelta(MessageComplete(response)),
        MessageEvent(message),
        TransitionEvent(Continue.NEXT_TURN, n),
    ]


async def events(requests: int, thread: ThreadTrace | None) -> AsyncIterator[LoopEvent]:
    for n in range(requests):
        for event in request_events(n):
            yield event
        block = ToolUseBlock(id=f"toolu_{n}", name="Read", input={"file_path": "a"})
        if thread is not None:
            thread.tool_started(block)
            thread.tool_finished(block, [tool_result_message(block.id, "ok")])


async def timed(requests: int, telemetry: Telemetry | None) -> float:
    """Seconds to push `requests` requests (and their tool calls) through."""
    thread = telemetry.thread(agent_name="bench", model=MODEL) if telemetry else None
    start = time.perf_counter()
    if thread is None:
        async for _event in events(requests, None):
            pass
    else:
        async for _event in thread.run(events(requests, thread), prompt="bench"):
            pass
    return time.perf_counter() - start


def sdk_telemetry() -> tuple[OtelTelemetry, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return OtelTelemetry(
        provider.get_tracer("bench"), provider_name="anthropic", conversation_id=lambda: "s"
    ), exporter


async def main(requests: int, rounds: int) -> None:
    def noop() -> Telemetry:
        return OtelTelemetry(
            trace.NoOpTracer(), provider_name="anthropic", conversation_id=lambda: "s"
        )

    results: dict[str, list[float]] = {"untraced": [], "off": [], "API no-op": [], "SDK": []}
    for _ in range(rounds):  # interleaved, so machine load hits every figure alike
        results["untraced"].append(await timed(requests, None))
        results["off"].append(await timed(requests, Telemetry()))
        results["API no-op"].append(await timed(requests, noop()))
        telemetry, exporter = sdk_telemetry()
        results["SDK"].append(await timed(requests, telemetry))
        assert len(exporter.get_finished_spans()) == 2 * requests + 1
    floor = statistics.median(results["untraced"])
    print(f"{requests} requests, {DELTAS} deltas and one tool call each; median of {rounds}")
    for name, times in results.items():
        per = statistics.median(times) / requests * 1e6
        extra = (statistics.median(times) - floor) / requests * 1e6
        print(f"  {name:10} {per:8.1f} us/request   +{extra:6.1f} us over untraced")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.rounds))
