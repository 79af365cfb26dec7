"""Benchmark: how much of a resumed session's first request is read from the prompt cache.

The real `queryloop -p` command against `queryloop.testing`'s MessagesServer (its prompt-cache
simulation bills each request as the API does; it runs in this process, so its cache clock
is not faked). A scripted session of `--turns` turns reads one file per turn (a git
repository with a QUERYLOOP.md), then `queryloop --continue -p` resumes it under `faketime`
on a later day. Printed per scenario: the first resumed request's prompt tokens, cache read,
cache write, read share and cost.

Scenarios:

* `next day`: the first run at the real time, the resume `faketime -f +1d` (the cache kept
  warm by the simulation: what moves is only what the program changes);
* `across midnight`: the first run at 23:58, the resume at 00:01 the next day (a real cache
  lives that long: 5 minutes, or an hour with `cacheTtl: "1h"`).

    python bench/resume_cache.py [--turns 40] [--file-kb 14] [--src DIR]

`--src DIR` runs the command from another source tree (for example a worktree of an earlier
commit, to measure before a change): it goes first on PYTHONPATH.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from queryloop.messages import Usage
from queryloop.providers.models import cost_usd
from queryloop.session import latest_session
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

MODEL = "claude-sonnet-4-6"
"""A 1M-token window: the session never reaches compaction."""
SCENARIOS = {
    "next day": (None, "+1d"),
    "across midnight": ("@2026-12-05 23:58:00", "@2026-12-06 00:01:00"),
}


def scripted(turns: int) -> Any:
    """Read files f0 .. f{turns-1}, one a turn, then answer; every later prompt: answer."""
    read = 0

    def model(body: dict[str, Any]) -> Turn:
        nonlocal read
        if read < turns:
            read += 1
            return turn(
                text(f"Reading f{read - 1}."), tool_use("Read", {"file_path": f"f{read - 1}.py"})
            )
        return turn(text(f"Read {read} files; all of them define helpers."))

    return model


def make_project(root: Path, turns: int, file_kb: int) -> Path:
    folder = root / "proj"
    folder.mkdir()
    line = "def helper_{i}_{j}(value: int) -> int:\n    return value * {j} + {i}\n\n"
    for i in range(turns):
        body = "".join(line.format(i=i, j=j) for j in range(file_kb * 1024 // 50))
        (folder / f"f{i}.py").write_text(body[: file_kb * 1024])
    (folder / "QUERYLOOP.md").write_text("Keep answers short. Run tests with `make test`.\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True)
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "files"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    return folder


def run(
    folder: Path, base_url: str, home: Path, when: str | None, src: str | None, *args: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="k", QUERYLOOP_HOME=str(home))
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    faketime = [shutil.which("faketime") or "faketime", "-f", when] if when else []
    command = [*faketime, sys.executable, "-m", "queryloop.cli.main", *args]
    command += ["--model", MODEL, "--permission-mode", "bypassPermissions"]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"queryloop failed: {done.stderr}")


def usages(folder: Path, home: Path) -> list[Usage]:
    path = latest_session(folder, home)
    assert path is not None
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [Usage.from_dict(r["usage"]) for r in records if r.get("record") == "usage"]


def scenario(name: str, turns: int, file_kb: int, src: str | None) -> str:
    first_at, resume_at = SCENARIOS[name]
    window = 1_000_000  # the model's: the session never meets "prompt is too long"
    with (
        tempfile.TemporaryDirectory() as tmp,
        MessagesServer(scripted(turns), context_window=window) as server,
    ):
        root = Path(tmp)
        folder, home = make_project(root, turns, file_kb), root / "home"
        run(folder, server.base_url, home, first_at, src, "-p", "Read every file.")
        before = len(usages(folder, home))
        run(folder, server.base_url, home, resume_at, src, "--continue", "-p", "Anything else?")
        first = usages(folder, home)[before]
    share = first.cache_read_input_tokens / first.total_input_tokens
    return (
        f"| {name} | {first.total_input_tokens:,} | {first.cache_read_input_tokens:,} | "
        f"{first.cache_creation_input_tokens:,} | {share:.1%} | ${cost_usd(first, MODEL):.3f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--file-kb", type=int, default=14)
    parser.add_argument("--src", default=None, help="run the command from this source tree")
    args = parser.parse_args()
    if shutil.which("faketime") is None:
        raise SystemExit("needs faketime (Debian package faketime; ./run test installs it)")
    print(f"{args.turns} turns, {args.file_kb} KB files, {MODEL}")
    print("| resumed | prompt tokens | cache read | cache write | read share | cost |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in SCENARIOS:
        print(scenario(name, args.turns, args.file_kb, args.src))


if __name__ == "__main__":
    main()
