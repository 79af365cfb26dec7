"""Benchmark: what the Bash sandbox costs per command.

Each command runs through `run_shell` (the Bash tool's runner) unsandboxed, sandboxed with no
network, and sandboxed with an allowed domain (the proxy and the in-sandbox bridge: socat, and
the Python fallback), N times each, interleaved so load on the machine hits all alike.
Reported: the median wall time per command and each sandbox's extra time over the
unsandboxed run (target: under 50 ms).
The working folder holds the protected paths a real session mounts read-only (a settings
file, .git/hooks, .git/config), and several missing ones that need placeholders.

    python bench/sandbox_cost.py [--runs 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from queryloop.sandbox import Sandbox, SandboxPolicy
from queryloop.sandbox.bridge import find_socat
from queryloop.tools.builtin._shell import run_shell

COMMANDS = ("true", "echo hi", "ls")


def _project(root: Path) -> tuple[Path, tuple[Path, ...]]:
    project = root / "proj"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".queryloop").mkdir()
    (project / ".queryloop" / "settings.json").write_text("{}")
    for i in range(20):
        (project / f"file{i}.txt").write_text("x")
    protected = (
        project / ".queryloop" / "settings.json",
        project / ".queryloop" / "settings.local.json",  # missing: a placeholder
        project / ".mcp.json",  # missing: a placeholder
        project / ".git" / "hooks",
        project / ".git" / "config",
    )
    return project, protected


async def _time(sandbox: Sandbox | None, command: str, project: Path) -> float:
    started = time.perf_counter()
    outcome = await run_shell(
        command, project, dict(os.environ), 30, sandbox=sandbox, working_dirs=[project]
    )
    elapsed = time.perf_counter() - started
    if outcome.exit_code != 0:
        raise SystemExit(f"{command!r} failed: {outcome.stderr}")
    return elapsed


async def main(runs: int) -> None:
    if shutil.which("bwrap") is None:
        raise SystemExit("bwrap is not installed (apt-get install bubblewrap)")
    root = Path(tempfile.mkdtemp(prefix="sandbox-bench-"))
    try:
        project, protected = _project(root)
        offline = Sandbox(SandboxPolicy(read_only=protected))
        network = SandboxPolicy(read_only=protected, allowed_domains=("example.com",))
        if find_socat() is None:
            raise SystemExit("socat is not installed (apt-get install socat)")
        socat = Sandbox(network, bridge="socat")
        python = Sandbox(network, bridge="python")
        kinds: dict[str, Sandbox | None] = {
            "unsandboxed": None, "sandboxed": offline,
            "+proxy (socat)": socat, "+proxy (python)": python,
        }  # fmt: skip
        for sandbox in kinds.values():  # warm up: the probe, the proxy, the page cache
            await _time(sandbox, "true", project)
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(runs):
            for command in COMMANDS:
                for kind, sandbox in kinds.items():
                    times.setdefault((kind, command), []).append(
                        await _time(sandbox, command, project)
                    )
        await socat.aclose()
        await python.aclose()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"median of {runs} runs per command, ms (python {sys.version.split()[0]})")
    extras = ("+sandbox", "+socat", "+python")
    print(
        f"{'command':<10}" + "".join(f"{k:>17}" for k in kinds) + "".join(f"{e:>9}" for e in extras)
    )
    for command in COMMANDS:
        medians = [statistics.median(times[(k, command)]) * 1000 for k in kinds]
        over = [m - medians[0] for m in medians[1:]]
        print(
            f"{command:<10}"
            + "".join(f"{m:>17.1f}" for m in medians)
            + "".join(f"{o:>9.1f}" for o in over)
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    asyncio.run(main(parser.parse_args().runs))
