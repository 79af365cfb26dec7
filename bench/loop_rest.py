"""Benchmark: what tool-use summaries and checkpoints cost the main loop.

1. Summaries: an Agent on the local server runs TURNS tool turns, with summaries off and on;
   the summary model answers after SUMMARY_DELAY seconds (a slow summarizer). Reported: the
   wall time of the run, and the median gap between a tool result and the next main request
   (the loop must not wait for a summary, so the gap stays the same); the
   run with summaries also waits for the last one at the end (at most the grace, 3 s).
2. Checkpoints: the snapshot taken before a Write/Edit (files of 10 KB and 1 MB), and a code
   rewind over N prompts.

    python bench/loop_rest.py [--turns 10] [--summary-delay 0.3]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from queryloop import Agent
from queryloop.checkpoints import CheckpointStore
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

SUMMARY_MODEL = "claude-haiku-5-5"


def model(turns: int, delay: float) -> Any:
    def answer(body: dict[str, Any]) -> Turn:
        if body["model"] == SUMMARY_MODEL:
            time.sleep(delay)  # the handler thread only: other requests go on
            return turn(text("Echoed a marker"))
        done = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if done < turns:
            return turn(tool_use("Bash", {"command": f"echo {done}"}))
        return turn(text("Finished."))

    return answer


async def run_summaries(turns: int, delay: float, on: bool) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp, MessagesServer(model(turns, delay)) as server:
        os.environ["QUERYLOOP_HOME"] = str(Path(tmp) / "home")
        agent = Agent("claude-sonnet-5-5", base_url=server.base_url, cwd=tmp,
                      retry=RetryPolicy(max_retries=0), permission_mode="bypassPermissions",
                      tool_use_summaries=on)  # fmt: skip
        await agent.start()
        started = time.monotonic()
        await agent.run("go")
        wall = time.monotonic() - started
        await agent.aclose()
        main = [r.received_at for r in server.recorded if r.body["model"] != SUMMARY_MODEL]
        side = sum(1 for r in server.recorded if r.body["model"] == SUMMARY_MODEL)
    gaps = sorted(b - a for a, b in itertools.pairwise(main))
    return wall, gaps[len(gaps) // 2] if gaps else 0.0, side


def bench_checkpoints() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for size in (10 * 1024, 1024 * 1024):
            store = CheckpointStore(root / f"cp{size}")
            files = [root / f"f{size}_{i}.bin" for i in range(50)]
            for f in files:
                f.write_bytes(os.urandom(size))
            started = time.perf_counter()
            for i, f in enumerate(files):
                store.begin(f"u{i}", "prompt")
                store.before_change(f)
            per = (time.perf_counter() - started) / len(files) * 1000
            started = time.perf_counter()
            report = store.restore_code(store.checkpoints()[0])
            restore = (time.perf_counter() - started) * 1000
            print(f"checkpoint snapshot of a {size // 1024:>5} KB file: {per:6.2f} ms; "
                  f"code rewind over 50 prompts ({len(report.restored)} files): "
                  f"{restore:6.1f} ms")  # fmt: skip


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--summary-delay", type=float, default=0.3)
    args = parser.parse_args()
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench")
    for on in (False, True):
        wall, gap, side = await run_summaries(args.turns, args.summary_delay, on)
        label = "on " if on else "off"
        print(f"summaries {label}: {args.turns} tool turns in {wall:5.2f} s, median gap "
              f"between main requests {gap * 1000:6.1f} ms, {side} summary requests "
              f"(each {args.summary_delay:.1f} s slow)")  # fmt: skip
    bench_checkpoints()


if __name__ == "__main__":
    asyncio.run(main())
