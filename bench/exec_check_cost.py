"""Benchmark: what the exec check costs, per command and per program executed.

Each command runs through `run_shell` (the Bash tool's runner) without the check and with it
(deny rules `Bash(rm -rf:*)`, `Bash(curl:*)`, `Bash(git push:*)`), N times each, interleaved
so load on the machine hits both alike. Per command: `true` (one exec, the shell's). Per
exec: a loop that executes `/bin/true` K times; the extra time over the unchecked run,
divided by K, is the cost of one supervised exec (one notification, one open and fstat of
the file, the rule match when the program is a watched one).

    python bench/exec_check_cost.py [--runs 20] [--execs 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from queryloop.permissions import RuleSet
from queryloop.permissions.exec_rules import exec_rules
from queryloop.sandbox import ExecGuard
from queryloop.tools.builtin._shell import run_shell

DENY = ("Bash(rm -rf:*)", "Bash(curl:*)", "Bash(git push:*)")


async def _time(command: str, folder: Path, guard: ExecGuard | None) -> float:
    started = time.perf_counter()
    outcome = await run_shell(command, folder, dict(os.environ), 60, guard=guard)
    elapsed = time.perf_counter() - started
    if outcome.exit_code != 0:
        raise SystemExit(f"{command!r} failed: {outcome.stderr}")
    return elapsed


async def main(runs: int, execs: int) -> None:
    rules = RuleSet.from_strings(deny=DENY)
    guard = ExecGuard(lambda command, _cwd: exec_rules(rules, command))
    problem = guard.unavailable()
    if problem is not None:
        raise SystemExit(f"the exec check cannot run here: {problem}")
    loop = f"for i in $(seq {execs}); do /bin/true; done"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for command in ("true", loop):  # warm both paths once
            await _time(command, folder, None)
            await _time(command, folder, guard)
        times: dict[tuple[str, bool], list[float]] = {}
        for _ in range(runs):
            for command in ("true", loop):
                for checked in (False, True):
                    elapsed = await _time(command, folder, guard if checked else None)
                    times.setdefault((command, checked), []).append(elapsed)
    med = {key: statistics.median(values) for key, values in times.items()}
    per_command = (med[("true", True)] - med[("true", False)]) * 1000
    per_exec = (med[(loop, True)] - med[(loop, False)]) / execs * 1e6
    print(f"runs={runs}, execs per loop={execs}, load={os.getloadavg()[0]:.1f}")
    print(
        f"`true`:      {med[('true', False)] * 1000:6.1f} ms unchecked, "
        f"{med[('true', True)] * 1000:6.1f} ms checked  (+{per_command:.1f} ms per command)"
    )
    print(f"{execs} execs: {med[(loop, False)] * 1000:6.1f} ms unchecked, "
          f"{med[(loop, True)] * 1000:6.1f} ms checked  (+{per_exec:.0f} µs per exec)")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--execs", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.runs, args.execs))
