"""Start-up time of the `queryloop` command for paths that must stay fast."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 5


def median_ms(args: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "queryloop.cli.main", *args], capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


if __name__ == "__main__":
    for args in (["--help"], ["--version"], ["sessions"]):
        print(f"queryloop {' '.join(args):<10} {median_ms(args):7.1f} ms (median of {RUNS})")
