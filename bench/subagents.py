"""Benchmark: parallel subagents take as long as the slowest one, not the sum.

One assistant message calls the Agent tool N times; each subagent makes two model calls (a
tool call, then its answer) that the local server answers after LATENCY seconds each (a
model's time to respond), and runs one real Bash command. The whole Agent round is timed,
from the parent's first tool_use to its next request, over real HTTP with the official SDK.
Sequential would be N x (2 x LATENCY + Bash); parallel should be close to one subagent.
Also prints the process's CPU time for the round (the in-process server included): on a busy
machine that CPU, not the model latency, is what stretches a wide fan-out.

    python bench/subagents.py            # N = 1, 2, 4, 8; latency 1 s; median of 3 runs
    python bench/subagents.py --n 4 --latency 0.5 --repeat 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from queryloop import Agent
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "agents"))
from subagent_support import by_thread, tool_results


def script(n: int, latency: float) -> tuple[Any, dict[str, float]]:
    marks: dict[str, float] = {}

    def parent(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            marks["round_start"] = time.monotonic()
            marks["cpu_start"] = time.process_time()
            calls = [
                tool_use("Agent", {"description": f"job {i}", "prompt": f"CHILD-{i}: work"})
                for i in range(n)
            ]
            return turn(*calls)
        marks["round_end"] = time.monotonic()
        marks["cpu_end"] = time.process_time()
        return turn(text("all reported"))

    def child(body: dict[str, Any]) -> Turn:
        time.sleep(latency)  # the model thinking (each request runs in its own server thread)
        if not tool_results(body):
            return turn(tool_use("Bash", {"command": "echo working"}))
        return turn(text("report"))

    children = {f"CHILD-{i}:": child for i in range(n)}
    return by_thread(parent, children), marks


async def measure(n: int, latency: float) -> tuple[float, float]:
    route, marks = script(n, latency)
    with tempfile.TemporaryDirectory() as tmp, MessagesServer(route) as server:
        home = Path(tmp) / "home"
        os.environ["ANTHROPIC_API_KEY"] = "bench"
        agent = Agent(
            "claude-sonnet-5-5",
            base_url=server.base_url,
            retry=RetryPolicy(max_retries=0),
            cwd=Path(tmp),
            home=home,
            permission_mode="bypassPermissions",
        )
        result = await agent.run("fan out")
        await agent.aclose()
        assert result.text == "all reported", result
    return marks["round_end"] - marks["round_start"], marks["cpu_end"] - marks["cpu_start"]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, nargs="*", default=[1, 2, 4, 8])
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3, help="runs per N (the median is kept)")
    args = parser.parse_args()
    await measure(1, args.latency)  # warm-up: lazy imports, first subprocess
    one = None
    rows = []
    for n in args.n:
        runs = sorted([await measure(n, args.latency) for _ in range(args.repeat)])
        wall, cpu = runs[len(runs) // 2]
        one = one if one is not None else wall
        rows.append(
            {
                "subagents": n,
                "wall_s": round(wall, 3),
                "sequential_s": round(n * one, 3),
                "cpu_s": round(cpu, 3),
            }
        )
        print(
            f"{n} subagents: round {wall:.2f} s · one subagent {one:.2f} s · "
            f"sequential would be ~{n * one:.2f} s · {n * one / wall:.1f}x · "
            f"CPU {cpu:.2f} s ({cpu / n:.2f} s per subagent, server included)"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    asyncio.run(main())
