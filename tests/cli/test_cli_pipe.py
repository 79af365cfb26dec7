"""`queryloop -p ... | head`: a closed stdout ends the command quietly (issue 13)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_helpers import COMMAND, cli_env, project

from queryloop.cli.exit_codes import ExitCode
from queryloop.testing import MessagesServer, text, turn

MANY_LINES = "".join(f"line {i}\n" for i in range(3_000))


@pytest.mark.parametrize("output_format", ["text", "stream-json"])
def test_closed_stdout_exits_quietly(tmp_path: Path, output_format: str) -> None:
    with MessagesServer([turn(text(MANY_LINES))]) as server:
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader is gone before the first byte is written
        try:
            done = subprocess.run(
                [*COMMAND, "-p", "print a lot", "--output-format", output_format],
                cwd=project(tmp_path),
                env=cli_env(server.base_url, tmp_path),
                stdout=write_end,
                stderr=subprocess.PIPE,
                text=True,
                timeout=90,
            )
        finally:
            os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == ExitCode.OUTPUT_CLOSED


def test_piped_into_head(tmp_path: Path) -> None:
    with MessagesServer([turn(text(MANY_LINES))], event_delay=0.0) as server:
        command = " ".join([*COMMAND, "-p", "'print a lot'", "--output-format", "stream-json",
                            "--include-partial-messages"])  # fmt: skip
        done = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {command} 2>err.txt | head -n 2"],
            cwd=project(tmp_path),
            env=cli_env(server.base_url, tmp_path),
            capture_output=True,
            text=True,
            timeout=90,
        )
    assert len(done.stdout.splitlines()) == 2
    assert (project(tmp_path) / "err.txt").read_text() == ""
    assert done.returncode in (0, ExitCode.OUTPUT_CLOSED)
