"""Start-up and exit of the `queryloop` command, each figure beside `import anthropic`.

1. Paths that must stay fast: `--help`, `--version`, `sessions` (wall time to exit).
2. Interleaved, run by run (so machine load hits every figure alike):
   - `python -c "import anthropic"`: spawn -> the import done (the floor), and -> its exit;
   - `queryloop -p`: process start -> the first request byte at the local Messages API server
     (`queryloop.testing`, real HTTP on 127.0.0.1, the official SDK), and the seconds from the
     answer on stdout to the process's exit;
   - the same with one stdio MCP server configured (tests/mcp/servers/echo_server.py, a
     Python server on the official `mcp` SDK), beside that server's own start time (spawn to
     its answer to `initialize`, measured with a bare JSON-RPC client);
   - the REPL in a pseudo-terminal: process start -> its prompt on the screen.
3. The targets of issue 32, each against `import anthropic` (spawn -> import done) of the
   same run: the REPL's prompt within a quarter of it; `-p`'s first request within it plus
   0.35 s; the exit after the answer within a fifth of it. Printed as met or not, and as
   ratios to the import.
4. queryloop's own share, two ways: the first-request figure minus `import anthropic`
   (both medians of the same run), and the same run in an interpreter that has imported the
   SDK already, timed from the end of that import to the first request byte (what is left
   when the SDK costs nothing: no overlap with the background import can hide anything).

queryloop's sources are byte-compiled first (`compileall`), as a pip install does: this
machine sets PYTHONDONTWRITEBYTECODE, and an editable checkout would otherwise compile every
module on every start (~0.2 s), which no installed copy pays. PYTHONPATH=other/src measures
another checkout with the same bench (the before/after figures in docs/benchmarks.md).

    python bench/cli_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pexpect

import queryloop
from queryloop.testing import MessagesServer, text, turn

RUNS = 5
COMMAND = [sys.executable, "-m", "queryloop.cli.main"]
ECHO_SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp" / "servers" / "echo_server.py"


def median_ms(args: list[str]) -> float:
    """Median wall time of `queryloop ARGS` to its exit, in ms."""
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run([*COMMAND, *args], capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def environment(server: MessagesServer, folder: Path, **extra: str) -> dict[str, str]:
    """The child's environment: our server, a dummy key, a private QUERYLOOP_HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.pop("QUERYLOOP_MODEL", None)
    env.update(
        ANTHROPIC_BASE_URL=server.base_url,
        ANTHROPIC_API_KEY="bench",
        QUERYLOOP_HOME=str(folder / "home"),
        **extra,
    )
    return env


SDK_ONLY = "import anthropic, sys, time; sys.stdout.write(str(time.monotonic()))"


def children_cpu_s() -> float:
    """CPU seconds (user + system) of the children waited for so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def sdk_process_s() -> tuple[float, float, float]:
    """`python -c "import anthropic"`: (spawn -> import done, spawn -> exit, its CPU seconds).
    The first is the floor for "start -> first request"; the second includes the
    interpreter's teardown; the third moves less with the machine's load than wall time."""
    cpu = children_cpu_s()
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", SDK_ONLY], check=True, capture_output=True)
    return float(done.stdout) - start, time.monotonic() - start, children_cpu_s() - cpu


def print_run(server: MessagesServer, folder: Path, *extra: str) -> tuple[float, float, float]:
    """`queryloop -p hello`: (start -> first request byte, answer on stdout -> exit, the
    process's CPU seconds)."""
    before = len(server.recorded)
    cpu = children_cpu_s()
    started = time.monotonic()  # the server stamps arrivals with the same (system-wide) clock
    proc = subprocess.Popen(
        [*COMMAND, "-p", "hello", *extra],
        cwd=folder,
        env=environment(server, folder),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    answer = proc.stdout.readline()
    answered = time.monotonic()
    proc.wait()
    exited = time.monotonic()
    if proc.returncode != 0 or answer != "hi\n" or len(server.recorded) <= before:
        raise SystemExit(f"queryloop -p failed (exit {proc.returncode}, stdout {answer!r})")
    return server.recorded[before].received_at - started, exited - answered, children_cpu_s() - cpu


def mcp_server_start_s(folder: Path) -> float:
    """The MCP server's own start: spawn -> its answer to `initialize` (a bare client)."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    start = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, str(ECHO_SERVER)],
        cwd=folder,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    proc.stdout.readline()
    seconds = time.monotonic() - start
    proc.stdin.close()
    proc.wait()
    return seconds


def repl_prompt_s(server: MessagesServer, folder: Path) -> float:
    """The REPL in a pty (xterm): process start -> its prompt drawn."""
    env = environment(server, folder, TERM="xterm-256color", PROMPT_TOOLKIT_NO_CPR="1")
    start = time.monotonic()
    child = pexpect.spawn(
        COMMAND[0], COMMAND[1:], cwd=str(folder), env=env, encoding="utf-8", timeout=60
    )
    child.setwinsize(40, 120)
    child.expect("/help for commands")
    child.expect(">\x08")  # prompt_toolkit draws ">" and moves back over the space
    seconds = time.monotonic() - start
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    return seconds


OWN_SHARE = """
import sys, time
import anthropic
sys.stderr.write(f"sdk-loaded {time.monotonic()}\\n")
from queryloop.cli.main import entrypoint
sys.argv = ["queryloop", "-p", "hello"]
entrypoint()
"""
"""The console script's path (`entrypoint`, as `queryloop` runs), the SDK imported first."""


def own_share_s(server: MessagesServer, folder: Path) -> float:
    """Seconds from the SDK being imported (by the interpreter, first) to the first request."""
    before = len(server.recorded)
    done = subprocess.run(
        [sys.executable, "-c", OWN_SHARE],
        cwd=folder,
        env=environment(server, folder, QUERYLOOP_PRELOAD="0"),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0 or len(server.recorded) <= before:
        raise SystemExit(f"queryloop -p failed (exit {done.returncode}): {done.stderr[-500:]}")
    loaded = float(done.stderr.split("sdk-loaded ", 1)[1].split()[0])
    return server.recorded[before].received_at - loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    source = Path(queryloop.__file__).resolve().parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(source)], check=True)
    print(f"queryloop from {source}")
    for argv in (["--help"], ["--version"], ["sessions"]):
        print(f"queryloop {' '.join(argv):<10} {median_ms(argv):7.1f} ms (median of {RUNS})")
    with tempfile.TemporaryDirectory() as tmp, MessagesServer([turn(text("hi"))] * 1000) as server:
        folder = Path(tmp)
        (folder / "home").mkdir()
        config = folder / "mcp.json"
        echo = {"command": sys.executable, "args": [str(ECHO_SERVER)]}
        config.write_text(json.dumps({"mcpServers": {"echo": echo}}))
        mcp = ("--mcp-config", str(config))
        figures: dict[str, list[float]] = {}
        probes: dict[str, Callable[[], float | tuple[float, ...]]] = {
            "sdk": sdk_process_s,
            "print": lambda: print_run(server, folder),
            "print+mcp": lambda: print_run(server, folder, *mcp),
            "server": lambda: mcp_server_start_s(folder),
            "repl": lambda: repl_prompt_s(server, folder),
            "own": lambda: own_share_s(server, folder),
        }
        for probe in probes.values():
            probe()  # warm the page cache and the .pyc files
        for _ in range(args.runs):
            for name, probe in probes.items():
                value = probe()
                pair = value if isinstance(value, tuple) else (value,)
                for index, part in enumerate(pair):
                    figures.setdefault(f"{name}:{index}", []).append(part)
    report(figures, args.runs)


def report(figures: dict[str, list[float]], runs: int) -> None:
    """Print the medians, each beside `import anthropic`."""

    def med(key: str) -> float:
        return statistics.median(figures[key])

    sdk = med("sdk:0")  # spawn -> `import anthropic` done
    load = os.getloadavg()[0]
    print(f"medians of {runs} interleaved runs; load average {load:.1f} on {os.cpu_count()} cores")
    rows = [
        ('python -c "import anthropic": spawn -> import done', sdk),
        ('python -c "import anthropic": spawn -> exit', med("sdk:1")),
        ("-p: start -> first request byte", med("print:0")),
        ("-p: our own share (first request - import anthropic)", med("print:0") - sdk),
        ("-p: our own share (SDK imported first, then to request)", med("own:0")),
        ("-p, one MCP server: start -> first request byte", med("print+mcp:0")),
        ("    what the server adds (vs. -p without it)", med("print+mcp:0") - med("print:0")),
        ("    the server's own start (spawn -> initialize answer)", med("server:0")),
        ("-p: answer on stdout -> process exit", med("print:1")),
        ("-p, one MCP server: answer on stdout -> process exit", med("print+mcp:1")),
        ("REPL (pty): start -> prompt drawn", med("repl:0")),
        ('CPU (user + system): python -c "import anthropic"', med("sdk:2")),
        ("CPU (user + system): queryloop -p, the whole process", med("print:2")),
    ]
    for label, seconds in rows:
        print(f"  {label:<58} {seconds:6.3f} s")
    print("targets (issue 32), against `import anthropic` of this run:")
    for label, seconds, bound in targets(figures):
        verdict = "met" if seconds <= bound else "NOT met"
        print(f"  {label:<58} {seconds:6.3f} s <= {bound:6.3f} s  {verdict}")
    print("the same as ratios to `import anthropic` (spawn -> import done) of this run:")
    for label, ratio, bound_ratio in ratios(figures):
        verdict = "met" if ratio <= bound_ratio else "NOT met"
        print(f"  {label:<58} {ratio:6.3f}   <= {bound_ratio:6.3f}    {verdict}")


def targets(figures: dict[str, list[float]]) -> list[tuple[str, float, float]]:
    """(what, the median, its bound) for each start-up target, the bounds from the same
    run's `import anthropic` (spawn -> import done)."""
    sdk = statistics.median(figures["sdk:0"])
    return [
        ("REPL: start -> prompt drawn (<= 1/4 import)", statistics.median(figures["repl:0"]),
         sdk / 4),
        ("-p: start -> first request byte (<= import + 0.35 s)",
         statistics.median(figures["print:0"]), sdk + 0.35),
        ("-p: answer on stdout -> process exit (<= 1/5 import)",
         statistics.median(figures["print:1"]), sdk / 5),
    ]  # fmt: skip


def ratios(figures: dict[str, list[float]]) -> list[tuple[str, float, float]]:
    """(what, its ratio to the import, the ratio allowed) for the three targets: the prompt
    and the exit as fractions of the import, the first request as a multiple of it (its
    bound, import + 0.35 s, divided by the import of this run)."""
    sdk = statistics.median(figures["sdk:0"])
    return [(label, seconds / sdk, bound / sdk) for label, seconds, bound in targets(figures)]


if __name__ == "__main__":
    main()
