"""Benchmark: normalize_messages_for_api on 1k, 10k and 100k message histories.

A realistic mix per turn: an attachment, an assistant response split into a text message
and a tool_use message (one API message id), and the tool's result (about 2 KB in 40% of
turns, short otherwise). Prints total milliseconds and microseconds per message, best of
several runs (wall clock and this process's CPU time). Goal: 10k messages under 50 ms;
time grows linearly.

    python bench/normalize.py [--sizes 1000,10000,100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

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

TOOLS: list[dict[str, Any]] = [
    {"name": "Read", "description": "Read a file", "input_schema": {"type": "object"}},
    {"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}},
]
BIG_RESULT = ("line of tool output with some text in it " * 50)[:2048]


def history(n_messages: int) -> list[Message]:
    """About `n_messages` internal messages of the realistic mix (4 per turn)."""
    out: list[Message] = [UserMessage(content="Fix the failing test.", uuid="u0", timestamp="t")]
    turn = 0
    while len(out) < n_messages:
        tid = f"toolu_{turn:08d}"
        mid = f"msg_{turn:08d}"
        result = BIG_RESULT if turn % 5 < 2 else "ok"
        out.append(
            AttachmentMessage(
                attachment=Attachment("text", {"content": f"todo list changed ({turn})"}),
                uuid=f"a{turn}",
                timestamp="t",
            )
        )
        out.append(
            AssistantMessage(
                content=(TextBlock(text=f"Running step {turn}."),),
                message_id=mid,
                uuid=f"x{turn}",
                timestamp="t",
            )
        )
        out.append(
            AssistantMessage(
                content=(
                    ToolUseBlock(id=tid, name="Bash", input={"command": f"pytest -k {turn}"}),
                ),
                message_id=mid,
                uuid=f"y{turn}",
                timestamp="t",
            )
        )
        out.append(
            UserMessage(
                content=(ToolResultBlock(tool_use_id=tid, content=result),),
                uuid=f"r{turn}",
                timestamp="t",
            )
        )
        turn += 1
    return out[:n_messages]


def best_of(messages: list[Message], repeat: int) -> tuple[float, float]:
    """Fastest of `repeat` runs: (wall seconds, CPU seconds of this process).

    CPU time is what to compare on a busy machine: other processes do not inflate it.
    """
    wall = cpu = float("inf")
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        normalize_messages_for_api(messages, TOOLS, thinking_enabled=False)
        wall = min(wall, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'messages':>10} {'wall ms':>10} {'cpu ms':>10} {'us/message (cpu)':>17}")
    for size in (int(s) for s in args.sizes.split(",")):
        messages = history(size)
        wall, cpu = best_of(messages, args.repeat if size < 100_000 else max(1, args.repeat // 2))
        print(f"{size:>10} {wall * 1000:>10.2f} {cpu * 1000:>10.2f} {cpu * 1e6 / size:>17.2f}")


if __name__ == "__main__":
    main()
