"""Benchmark: many Claude Agent SDK sessions in one process (issue 33, item 4).

N sessions run at once in one Python process through `queryloop.claude_agent_sdk` (`query()`,
or one `ClaudeSDKClient` per session with `--api client`), each a scripted 10-turn tool loop:
nine model turns that call Read on a small file, then an answer. Each session runs ROUNDS
queries one after another. The local Messages server (`queryloop.testing`) runs in this
process; the sessions run in a child process, so its memory is the sessions' alone. Reported:

- queries per minute: finished `query()` calls (each ten model requests) / wall minutes;
- peak memory: the child's peak resident set size (`resource.getrusage(RUSAGE_SELF)
  .ru_maxrss`, not tracemalloc, which slows Python code several-fold and misses C
  allocations), and the same after imports, before any session started;
- time to first request, p50 and p95: from `query()` being called (a client: entering
  `async with ClaudeSDKClient(...)` for its first query, `client.query()` for later ones)
  to the server receiving that query's first request (both sides read CLOCK_MONOTONIC);
- the child's CPU time (user + system), the server's, and how many requests the server saw
  per query.

`--latency S` makes the model take S seconds before answering each request (a real model's
time to first token; the server answers each request in its own thread).

    python bench/sdk_concurrency.py                       # 10, 20, 40 sessions, 3 rounds
    python bench/sdk_concurrency.py --sessions 40 --api client --latency 1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

TAG = "session-query "


def model(turns: int, latency: float) -> Any:
    """Nine Read calls, then an answer: the turn is the number of tool results since the
    query's prompt."""

    def answer(body: dict[str, Any]) -> Turn:
        if latency:
            time.sleep(latency)
        done = 0  # tool results since this query's prompt (a client's session holds more)
        for message in body["messages"]:
            content = message["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks:
                if block.get("type") == "tool_result":
                    done += 1
                elif message["role"] == "user" and TAG in str(block.get("text", "")):
                    done = 0
        if done < turns - 1:
            return turn(tool_use("Read", {"file_path": "README.md"}))
        return turn(text("read it nine times"))

    return answer


# --- the child: the sessions --------------------------------------------------------------


async def one_query(tag: str, options: Any) -> tuple[float, float, bool]:
    from queryloop.claude_agent_sdk import ResultMessage, query

    started = time.monotonic()
    ok = False
    async for message in query(prompt=f"{TAG}{tag}: read README.md", options=options):
        if isinstance(message, ResultMessage):
            ok = not message.is_error
    return started, time.monotonic(), ok


async def query_session(index: str, rounds: int, options: Any) -> list[dict[str, Any]]:
    out = []
    for r in range(rounds):
        started, ended, ok = await one_query(f"{index}.{r}", options)
        out.append({"tag": f"{index}.{r}", "start": started, "end": ended, "ok": ok})
    return out


async def client_session(index: str, rounds: int, options: Any) -> list[dict[str, Any]]:
    from queryloop.claude_agent_sdk import ClaudeSDKClient, ResultMessage

    out = []
    opened = time.monotonic()  # the first round's wait includes connecting
    async with ClaudeSDKClient(options) as client:
        for r in range(rounds):
            tag = f"{index}.{r}"
            started, ok = opened if r == 0 else time.monotonic(), False
            await client.query(f"{TAG}{tag}: read README.md")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    ok = not message.is_error
            out.append({"tag": tag, "start": started, "end": time.monotonic(), "ok": ok})
    return out


async def sessions(
    count: int, rounds: int, turns: int, api: str, prefix: str = ""
) -> list[dict[str, Any]]:
    from queryloop.claude_agent_sdk import ClaudeAgentOptions

    options = ClaudeAgentOptions(cwd=os.getcwd(), max_turns=turns + 1, setting_sources=[])
    run = client_session if api == "client" else query_session
    results = await asyncio.gather(*(run(f"{prefix}{i}", rounds, options) for i in range(count)))
    return [q for session in results for q in session]


def child(args: argparse.Namespace) -> None:
    # One query first, alone: it pays the lazy imports (the SDK client, the tools), which
    # are the process's cost, not the sessions'; it is reported as the cold start.
    cold = asyncio.run(sessions(1, 1, args.turns, args.api, "warm"))[0]
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    queries = asyncio.run(sessions(args.child, args.rounds, args.turns, args.api))
    wall = time.monotonic() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    report = {
        "wall": wall,
        "baseline_kb": baseline,
        "peak_kb": usage.ru_maxrss,
        "cpu": usage.ru_utime + usage.ru_stime,
        "cold": cold,
        "queries": queries,
    }
    print(json.dumps(report))


# --- the parent: the server and the numbers -----------------------------------------------


def tag_of(body: dict[str, Any]) -> str | None:
    """The query a request belongs to: the tag in its last prompt (a client's session
    carries its earlier rounds' prompts too)."""
    found = None
    for message in body["messages"]:
        content = message["content"]
        texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content]
        for value in texts:
            if message["role"] == "user" and TAG in value:
                found = str(value.split(TAG, 1)[1].split(":", 1)[0])
    return found


def cpu_seconds() -> float:
    """This process's CPU time: the server's threads (the sessions run in the child)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(count: int, args: argparse.Namespace, server: MessagesServer, root: Path) -> None:
    before = len(server.recorded)
    env = {
        **os.environ,
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": "bench-key",
        "QUERYLOOP_HOME": str(root / f"home-{count}"),
    }
    env.pop("QUERYLOOP_MODEL", None)
    command = [sys.executable, __file__, "--child", str(count), "--rounds", str(args.rounds)]
    command += ["--turns", str(args.turns), "--api", args.api]
    server_cpu = cpu_seconds()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    server_cpu = cpu_seconds() - server_cpu
    if done.returncode != 0:
        raise SystemExit(f"{count} sessions failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    first: dict[str, float] = {}
    per_query: dict[str, int] = {}
    for entry in server.recorded[before:]:
        tag = tag_of(entry.body)
        if tag is None:
            continue
        first.setdefault(tag, entry.received_at)
        per_query[tag] = per_query.get(tag, 0) + 1
    queries = report["queries"]
    cold = report["cold"]
    cold_wait = first.get(cold["tag"], cold["start"]) - cold["start"]
    waits = [first[q["tag"]] - q["start"] for q in queries if q["tag"] in first]
    ok = sum(1 for q in queries if q["ok"])
    requests = statistics.mean(per_query.values()) if per_query else 0.0
    mb = 1024.0
    peak, base = report["peak_kb"] / mb, report["baseline_kb"] / mb
    p50, p95 = percentile(waits, 0.5) * 1000, percentile(waits, 0.95) * 1000
    print(
        f"{count:>3} sessions · {len(queries)} queries ({ok} ok, {requests:.0f} requests each) "
        f"in {report['wall']:6.2f}s · {len(queries) / report['wall'] * 60:7.0f} queries/min · "
        f"peak RSS {peak:6.1f} MB (after imports {base:5.1f} MB, "
        f"+{(peak - base) / count:4.2f} MB/session) · first request p50 {p50:6.1f} ms "
        f"p95 {p95:6.1f} ms · CPU {report['cpu']:5.1f}s "
        f"({report['cpu'] / len(queries) * 1000:.0f} ms/query; server {server_cpu:5.1f}s) · "
        f"cold process: first request {cold_wait * 1000:.0f} ms, query "
        f"{(cold['end'] - cold['start']) * 1000:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, nargs="+", default=[10, 20, 40])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--api", choices=["query", "client"], default="query")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    with (
        tempfile.TemporaryDirectory() as tmp,
        MessagesServer(model(args.turns, args.latency)) as server,
    ):
        root = Path(tmp)
        (root / "README.md").write_text("# a small project\n" * 20)
        print(
            f"api={args.api} turns={args.turns} rounds={args.rounds} latency={args.latency}s "
            f"cpus={os.cpu_count()} load={os.getloadavg()[0]:.1f}"
        )
        for count in args.sessions:
            measure(count, args, server, root)


if __name__ == "__main__":
    main()
