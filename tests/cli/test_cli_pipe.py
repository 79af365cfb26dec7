"""`queryloop -p ... | head`: a closed stdout ends the command quietly with 141 in every output
format, and the run still finishes: the transcript holds the whole answer (issues 13, 25.3)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_helpers import COMMAND, cli_env, project

from queryloop.cli.exit_codes import ExitCode
from queryloop.messages.constructors import final_text
from queryloop.session import latest_session, load_transcript
from queryloop.testing import MessagesServer, text, tool_use, turn

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


@pytest.mark.parametrize("output_format", ["text", "json", "stream-json"])
def test_head_closes_stdout_exit_141_and_the_run_finishes(
    tmp_path: Path, output_format: str
) -> None:
    (project(tmp_path) / "notes.txt").write_text("some notes\n")
    script = [turn(tool_use("Read", {"file_path": "notes.txt"})), turn(text(MANY_LINES))]
    with MessagesServer(script, event_delay=0.0) as server:
        command = " ".join([*COMMAND, "-p", "'read and print a lot'", "--output-format",
                            output_format])  # fmt: skip
        done = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {command} 2>err.txt | head -n 1"],
            cwd=project(tmp_path),
            env=cli_env(server.base_url, tmp_path),
            capture_output=True,
            text=True,
            timeout=90,
        )
        requests = len(server.requests)
    assert len(done.stdout.splitlines()) == 1
    assert (project(tmp_path) / "err.txt").read_text() == ""
    assert done.returncode == ExitCode.OUTPUT_CLOSED, output_format
    # Nothing lost: the reader going away did not stop the run.
    assert requests == 2
    path = latest_session(project(tmp_path), home=tmp_path / "home")
    assert path is not None
    assert final_text(load_transcript(path).messages).rstrip().endswith("line 2999")


def test_a_reader_that_reads_everything_is_not_a_closed_pipe(tmp_path: Path) -> None:
    with MessagesServer([turn(text("one short answer"))], event_delay=0.0) as server:
        command = " ".join([*COMMAND, "-p", "'say it'"])
        done = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {command} | head -n 1"],
            cwd=project(tmp_path),
            env=cli_env(server.base_url, tmp_path),
            capture_output=True,
            text=True,
            timeout=90,
        )
    assert done.stdout == "one short answer\n"
    assert done.returncode == 0, done.stderr
