"""Benchmark: what it costs that no tool starts before its call is durable (issue 25, item 15).

Streaming tool execution starts a tool while the model still streams; the assistant message
holding the tool_use is written first as a draft (`queryloop.loop.MessageDraft`), so a kill
while the tool runs leaves the call in the transcript. That is one more record per tool call.

1. A real 30-step session (the Agent, the official SDK against `queryloop.testing`'s server,
   one read-only tool call per step, transcript on disk): records written per step, by kind,
   and the wall time per step.
2. What one draft record costs: the Agent's transcript writes each record to the kernel
   (kill -9 safe) and fsyncs once per prompt; with `fsync=True` (the library default for a
   bare `Transcript`) every record is fsynced.

    python bench/tool_durable.py
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from queryloop import Agent, tool
from queryloop.messages.blocks import ToolUseBlock
from queryloop.messages.types import AssistantMessage
from queryloop.session import Transcript
from queryloop.testing import MessagesServer, text, tool_use, turn

STEPS = 30
REPEATS = 300


@tool(read_only=True, concurrency_safe=True)
async def lookup(key: str) -> str:
    """Read the value stored under a key.

    Args:
        key: The key.
    """
    return f"value-{key}"


def _script() -> list[Any]:
    steps = [
        turn(text(f"Reading k{n}."), tool_use("lookup", {"key": f"k{n}"})) for n in range(STEPS)
    ]
    return [*steps, turn(text("All read."))]


async def session_figures(tmp: Path) -> tuple[Counter[str], float]:
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench")
    with MessagesServer(_script()) as server:
        agent = Agent(
            "claude-sonnet-4-6",
            base_url=server.base_url,
            tools=[lookup],
            cwd=tmp,
            home=tmp / "home",
        )
        start = time.perf_counter()
        await agent.run("read the keys")
        seconds = time.perf_counter() - start
        transcript = agent.session.transcript
        await agent.aclose()
    assert transcript is not None
    kinds: Counter[str] = Counter()
    for line in transcript.path.read_text().splitlines():
        record = json.loads(line)
        kind = record["record"]
        if kind == "message" and record.get("partial"):
            kind = "message (draft)"
        elif kind == "timing":
            kind = f"timing {record['event']}"
        kinds[kind] += 1
    return kinds, seconds / STEPS


def per_draft_us(fsync: bool) -> float:
    draft = AssistantMessage(
        content=(ToolUseBlock("toolu_1", "Read", {"file_path": "/tmp/some/file.py"}),),
        message_id="msg_1",
    )
    samples: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, Transcript(Path(tmp) / "s.jsonl", fsync=fsync) as w:
        w.append(draft, partial=True)  # open + create outside the timing
        for _ in range(REPEATS):
            start = time.perf_counter()
            w.append(draft, partial=True)
            samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kinds, per_step = asyncio.run(session_figures(Path(tmp)))
    total = sum(kinds.values())
    print(f"{STEPS}-step session, one tool call per step: {total / STEPS:.2f} records per step")
    for kind, count in sorted(kinds.items()):
        print(f"  {kind:<24} {count / STEPS:5.2f} per step")
    print(f"  wall time per step: {per_step * 1000:.1f} ms")
    without = per_draft_us(False)
    with_fsync = per_draft_us(True)
    print(f"one draft record, written to the kernel (the Agent): {without:7.1f} µs (median)")
    print(f"one draft record, written and fsynced:               {with_fsync:7.1f} µs (median)")


if __name__ == "__main__":
    main()
