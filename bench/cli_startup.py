"""Start-up time of the `queryloop` command.

1. Paths that must stay fast: `--help`, `--version`, `sessions` (wall time to exit).
2. `queryloop -p` from process start to the first request byte at the local Messages API
   server (`queryloop.testing`, real HTTP, the official SDK): the time a person waits before
   the model even hears the question. Measured with the SDK imported in the background
   (the default) and, interleaved run by run so machine load hits both alike, with
   `QUERYLOOP_PRELOAD=0` (imported when the provider is built, as before). Also the CPU
   seconds the process used up to its exit, which load on a shared machine disturbs less
   than wall time, and the cost of `import anthropic` alone in a fresh interpreter.

    python bench/cli_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from queryloop.testing import MessagesServer, text, turn

RUNS = 5
COMMAND = [sys.executable, "-m", "queryloop.cli.main"]


def median_ms(args: list[str]) -> float:
    """Median wall time of `queryloop ARGS` to its exit, in ms."""
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run([*COMMAND, *args], capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def first_request(server: MessagesServer, folder: Path, preload: bool) -> tuple[float, float]:
    """(seconds from spawn to the first request's arrival, CPU seconds of the whole run)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(
        ANTHROPIC_BASE_URL=server.base_url,
        ANTHROPIC_API_KEY="bench",
        QUERYLOOP_HOME=str(folder / "home"),
        QUERYLOOP_PRELOAD="1" if preload else "0",
    )
    before = len(server.recorded)
    started = time.monotonic()  # the server stamps arrivals with the same (system-wide) clock
    proc = subprocess.Popen(
        [*COMMAND, "-p", "hello"],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 or len(server.recorded) <= before:
        raise SystemExit(f"queryloop -p failed (exit {proc.returncode})")
    arrived = server.recorded[before].received_at
    return arrived - started, usage.ru_utime + usage.ru_stime


def sdk_import_s() -> float:
    """Wall time of `import anthropic` in a fresh interpreter."""
    code = "import time; t = time.perf_counter(); import anthropic; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    for argv in (["--help"], ["--version"], ["sessions"]):
        print(f"queryloop {' '.join(argv):<10} {median_ms(argv):7.1f} ms (median of {RUNS})")
    with tempfile.TemporaryDirectory() as tmp, MessagesServer([turn(text("hi"))] * 1000) as server:
        folder = Path(tmp)
        (folder / "home").mkdir()
        first_request(server, folder, True)  # warm the page cache and the .pyc files
        runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for _ in range(args.runs):
            for preload in (True, False):
                runs[preload].append(first_request(server, folder, preload))
        sdk = statistics.median(sdk_import_s() for _ in range(3))
    load = os.getloadavg()[0]
    print(f"queryloop -p: process start -> first request byte (median of {args.runs}, "
          f"load average {load:.1f} on {os.cpu_count()} cores)")  # fmt: skip
    for preload, label in (
        (False, "SDK imported when needed"),
        (True, "SDK imported in background"),
    ):
        wall = statistics.median(r[0] for r in runs[preload])
        cpu = statistics.median(r[1] for r in runs[preload])
        low = min(r[0] for r in runs[preload])
        print(f"  {label:<27} {wall:6.3f} s (best {low:.3f} s; {cpu:.3f} CPU-s per run)")
    print(f"  `import anthropic` alone    {sdk:6.3f} s (fresh interpreter, median of 3)")


if __name__ == "__main__":
    main()
