"""`queryloop batch` as a real process on the local scripted server (shared by the CLI,
interrupt and PostgreSQL suites)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from queryloop.testing import MessagesServer


def batch_process(
    tasks: Path,
    out: Path,
    server: MessagesServer,
    home: Path,
    *options: str,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[str]:
    """`queryloop batch TASKS --out OUT` in its own process group, with `options` added
    (default: two at a time) and `env` over the test's environment."""
    variables = {
        **os.environ,
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": server.base_url,
        "QUERYLOOP_HOME": str(home),
        **(env or {}),
    }
    argv = [
        sys.executable, "-m", "queryloop.cli.main", "batch", str(tasks), "--out", str(out),
        *(options or ("--concurrency", "2")), "--model", "claude-sonnet-5-5",
        "--permission-mode", "bypassPermissions",
    ]  # fmt: skip
    return subprocess.Popen(
        argv, env=variables, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
