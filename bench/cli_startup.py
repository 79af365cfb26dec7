"""Start-up time of the `queryloop` command.

1. Paths that must stay fast: `--help`, `--version`, `sessions` (wall time to exit).
2. `queryloop -p` from process start to the first request byte at the local Messages API
   server (`queryloop.testing`, real HTTP, the official SDK): the time a person waits before
   the model even hears the question. Measured with the SDK imported in the background
   (the default) and, interleaved run by run so machine load hits both alike, with
   `QUERYLOOP_PRELOAD=0` (imported when the provider is built, as before). Also the CPU
   seconds the process used up to its exit, which load on a shared machine disturbs less
   than wall time, and the cost of `import anthropic` alone in a fresh interpreter.
3. queryloop's own share: the same run in an interpreter that has imported the SDK already,
   timed from the end of that import to the first request byte (what is left when the SDK
   costs nothing).

queryloop's sources are byte-compiled first (`compileall`), as a pip install does: this
machine sets PYTHONDONTWRITEBYTECODE, and an editable checkout would otherwise compile every
module on every start (~0.2 s), which no installed copy pays.

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


OWN_SHARE = """
import sys, time
import anthropic
sys.stderr.write(f"sdk-loaded {time.monotonic()}\\n")
from queryloop.cli.main import main
raise SystemExit(main(["-p", "hello"]))
"""


def own_share(server: MessagesServer, folder: Path) -> float:
    """Seconds from the SDK being imported to the first request's arrival."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(
        ANTHROPIC_BASE_URL=server.base_url,
        ANTHROPIC_API_KEY="bench",
        QUERYLOOP_HOME=str(folder / "home"),
        QUERYLOOP_PRELOAD="0",
    )
    before = len(server.recorded)
    done = subprocess.run(
        [sys.executable, "-c", OWN_SHARE], cwd=folder, env=env, capture_output=True, text=True
    )
    if done.returncode != 0 or len(server.recorded) <= before:
        raise SystemExit(f"queryloop -p failed (exit {done.returncode}): {done.stderr[-500:]}")
    loaded = float(done.stderr.split("sdk-loaded ", 1)[1].split()[0])
    return server.recorded[before].received_at - loaded


def sdk_import_s() -> float:
    """Wall time of `import anthropic` in a fresh interpreter."""
    code = "import time; t = time.perf_counter(); import anthropic; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    source = Path(__file__).resolve().parents[1] / "src" / "queryloop"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(source)], check=True)
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
        own = statistics.median(own_share(server, folder) for _ in range(args.runs))
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
    print(
        f"  queryloop's own share       {own:6.3f} s (SDK already imported, median of {args.runs})"
    )


if __name__ == "__main__":
    main()
