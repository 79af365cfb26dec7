"""An unreachable base URL (issue 25, item 5): the command says it is retrying, with the attempt
count, while it retries, and gives the final message once — in print mode (text on stderr,
stream-json as Claude Code's `system`/`api_retry` lines) and in the REPL in a real pty."""

from __future__ import annotations

import re
import socket
import subprocess
from pathlib import Path

import pytest
from cli_helpers import COMMAND, cli_env, json_lines, project
from pty_support import ReplChild

pytestmark = pytest.mark.slow

UNREACHABLE = "could not reach the Anthropic API"
RETRIES = 4  # the default RetryPolicy


def closed_url() -> str:
    """The address of a port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_print_mode_says_it_retries_then_stops_once(tmp_path: Path) -> None:
    env = cli_env(closed_url(), tmp_path)
    runs = {
        fmt: subprocess.Popen(
            [*COMMAND, "-p", "hello", "--output-format", fmt],
            cwd=project(tmp_path),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for fmt in ("text", "stream-json")
    }  # both at once: each waits through the whole backoff
    done = {fmt: run.communicate(timeout=90) for fmt, run in runs.items()}
    assert {fmt: run.returncode for fmt, run in runs.items()} == {"text": 5, "stream-json": 5}

    out, err = done["text"]
    lines = err.splitlines()
    retrying = [line for line in lines if "retrying in" in line]
    assert [re.search(r"attempt (\d)/(\d)", line).groups() for line in retrying] == [  # type: ignore[union-attr]
        (str(n), str(RETRIES)) for n in range(1, RETRIES + 1)
    ]
    assert all("(could not connect)" in line for line in retrying)
    assert err.count(UNREACHABLE) == 1 and lines[-1].startswith("queryloop: stopped (model_error)")
    assert out == ""

    records = json_lines(done["stream-json"][0])
    retries = [r for r in records if r.get("subtype") == "api_retry"]
    assert [(r["type"], r["attempt"], r["max_retries"]) for r in retries] == [
        ("system", n, RETRIES) for n in range(1, RETRIES + 1)
    ]
    assert all(r["retry_delay_ms"] > 0 and r["error_status"] is None for r in retries)
    assert all(UNREACHABLE in r["error"] for r in retries)
    assert records[-1]["type"] == "result" and records[-1]["terminal_reason"] == "model_error"
    assert records.index(retries[-1]) < len(records) - 2  # before the error and the result


def test_the_repl_says_it_retries_and_gives_the_message_once(
    tmp_path: Path, children: list[ReplChild]
) -> None:
    repl = ReplChild(closed_url(), tmp_path, "xterm-256color")
    children.append(repl)
    repl.started()
    repl.sendline("hello")
    for attempt in range(1, RETRIES + 1):
        repl.expect(rf"could not connect\); retrying in \d+\.\ds · attempt {attempt}/{RETRIES}")
    repl.expect("Stopped \\(model_error\\)")
    repl.expect_prompt()
    shown = "".join(repl.transcript[-2:])
    assert " ".join(shown.split()).count(UNREACHABLE) == 1, shown
