"""`python -m queryloop.demo` (`./run demo`): the real `queryloop` command, offline.

A scripted demo model, served over local HTTP by `queryloop.testing.MessagesServer`, fixes the
bug in a copy of the bundled sample project. The command runs headless as a subprocess with
`--output-format stream-json`; this script shows that stream readably and ends with a summary.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .view import StreamView, console

PROMPT = "Fix the failing test"
SAMPLE = Path(__file__).parent / "sample_project"
TEST_CMD = [sys.executable, "-m", "unittest", "-q"]


def run_tests(project: Path) -> tuple[bool, str]:
    """Run the sample project's tests: (passed, last line of the report)."""
    done = subprocess.run(
        TEST_CMD, cwd=project, capture_output=True, text=True, timeout=60, check=False
    )
    lines = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    return done.returncode == 0, " · ".join(lines[-2:]) if lines else "(no output)"


def command(project: Path) -> list[str]:
    """The queryloop invocation the demo runs."""
    return [
        sys.executable, "-m", "queryloop.cli.main",
        "-p", PROMPT,
        "--output-format", "stream-json", "--include-partial-messages",
        "--permission-mode", "acceptEdits",
        "--allowed-tools", "Bash(python -m unittest:*)",
        "--cwd", str(project),
    ]  # fmt: skip


def child_env(base_url: str, home: Path) -> dict[str, str]:
    """The subprocess environment: our server, a dummy key, a private QUERYLOOP_HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.pop("QUERYLOOP_MODEL", None)
    env.update(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="demo-key-not-a-real-key",
        QUERYLOOP_HOME=str(home),
        PYTHONUNBUFFERED="1",
    )
    # The model runs `python -m unittest` through Bash: make `python` this interpreter even
    # where only `python3` is installed.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def run_session(project: Path, home: Path, delay: float, raw: bool) -> dict[str, Any] | None:
    """Serve the demo model, run the command, render its stream; the result record."""
    from ..testing.server import MessagesServer
    from .script import demo_model

    view = StreamView(raw=raw)
    with MessagesServer(demo_model, event_delay=delay) as server:
        view.banner(server.base_url)
        console.print(f"[bold]$ queryloop -p {PROMPT!r} --output-format stream-json …[/]\n")
        proc = subprocess.Popen(
            command(project),
            cwd=project,
            env=child_env(server.base_url, home),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        for line in proc.stdout:
            view.line(line)
        proc.wait()
        violations = sum(len(v) for v in server.violations)
    view.finish(violations=violations, exit_code=proc.returncode)
    return view.result


def main(argv: list[str] | None = None) -> int:
    """Run the demo; 0 when the session completed and the tests pass afterwards."""
    parser = argparse.ArgumentParser(prog="python -m queryloop.demo", description=__doc__)
    parser.add_argument("--delay", type=float, default=0.004, help="seconds between events")
    parser.add_argument("--raw", action="store_true", help="also print the raw stream-json")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="queryloop-demo-"))
    try:
        project = tmp / "textkit"
        shutil.copytree(SAMPLE, project, ignore=shutil.ignore_patterns("__pycache__"))
        passed, report = run_tests(project)
        console.print(f"[dim]Sample project copied to {project}[/]")
        console.print(f"[dim]Before: python -m unittest → {'OK' if passed else report}[/]\n")
        result = run_session(project, tmp / "home", args.delay, args.raw)
        passed, report = run_tests(project)
        _summary(result, passed, report, tmp / "home", args.keep)
        ok = result is not None and not result.get("is_error", True) and passed
        return 0 if ok else 1
    finally:
        if args.keep:
            console.print(f"[dim]Kept {tmp}[/]")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def _summary(
    result: dict[str, Any] | None, passed: bool, report: str, home: Path, keep: bool
) -> None:
    console.rule("Summary")
    if result is None:
        console.print("[red]The command produced no result record.[/]")
    else:
        u = result.get("usage", {})
        prompt_tokens = (
            u.get("input_tokens", 0)
            + u.get("cache_creation_input_tokens", 0)
            + u.get("cache_read_input_tokens", 0)
        )
        hit = u.get("cache_read_input_tokens", 0) / prompt_tokens if prompt_tokens else 0.0
        console.print(
            f"  ending:       {result.get('terminal_reason')} "
            f"(exit {result.get('exit_code')}) in {result.get('duration_ms', 0) / 1000:.1f}s\n"
            f"  model turns:  {result.get('num_turns')}\n"
            f"  input tokens: {u.get('input_tokens', 0):,} uncached · "
            f"{u.get('cache_creation_input_tokens', 0):,} cache write · "
            f"{u.get('cache_read_input_tokens', 0):,} cache read\n"
            f"  output:       {u.get('output_tokens', 0):,} tokens\n"
            f"  cache hits:   {hit:.0%} of prompt tokens\n"
            f"  cost:         ${result.get('total_cost_usd', 0):.4f} at the model's list "
            "prices (the demo model itself is free)\n"
            f"  session:      {result.get('session_id')} "
            + (
                f"(transcript under {home / 'projects'})"
                if keep
                else "(its transcript goes with the temporary folder; --keep keeps it)"
            ),
            highlight=False,
        )
    verdict = "[green]PASS[/]" if passed else "[red]FAIL[/]"
    console.print(f"  tests now:    {verdict}  python -m unittest → {report}", highlight=False)


if __name__ == "__main__":
    sys.exit(main())
