"""Claude Code's users' habits on the command line: its flag spellings
(`--dangerously-skip-permissions`, `--allowedTools`, `--disallowedTools`) and a whole sentence
when `--resume` names no session."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import project, run_cli, user_texts

from queryloop.cli.args import UsageError, parse_args
from queryloop.testing import MessagesServer, text, tool_use, turn


def test_claude_codes_flag_spellings_run_as_ours(tmp_path: Path) -> None:
    script = [
        turn(tool_use("Bash", {"command": "touch made.txt"})),
        turn(tool_use("Write", {"file_path": str(project(tmp_path) / "w.txt"), "content": "x"})),
        turn(text("done")),
    ]
    with MessagesServer(script) as server:
        done = run_cli(
            server.base_url, tmp_path,
            "-p", "go", "--dangerously-skip-permissions", "--disallowedTools", "Write", "Edit",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (project(tmp_path) / "made.txt").exists()  # bypassPermissions: Bash ran unasked
    assert not (project(tmp_path) / "w.txt").exists()  # a deny rule holds in every mode
    write_result = user_texts(server.requests[2])[-1]
    assert "Write" in write_result and "denied" in write_result.lower()


def test_allowed_tools_takes_several_values_like_claude_codes() -> None:
    opts = parse_args(["-p", "hi", "--allowedTools", "Bash(git log:*)", "Read,Edit"])
    assert opts is not None and opts.prompt == "hi"
    assert opts.allowed_tools == ("Bash(git log:*)", "Read", "Edit")
    both = parse_args(["--allowed-tools", "Grep", "--allowedTools", "Glob", "-p", "x"])
    assert both is not None and both.allowed_tools == ("Grep", "Glob")
    denied = parse_args(["--disallowedTools", "Bash(rm:*)", "WebFetch", "-p", "x"])
    assert denied is not None and denied.disallowed_tools == ("Bash(rm:*)", "WebFetch")
    skip = parse_args(["--dangerously-skip-permissions", "-p", "x"])
    assert skip is not None and skip.agent_kwargs()["permission_mode"] == "bypassPermissions"
    with pytest.raises(UsageError, match="bypassPermissions"):
        parse_args(["--dangerously-skip-permissions", "--permission-mode", "plan"])


def test_resuming_no_such_session_says_a_whole_sentence(tmp_path: Path) -> None:
    with MessagesServer([turn(text("never asked"))]) as server:
        done = run_cli(server.base_url, tmp_path, "--resume", "nosuchsession", "-p", "hi")
    assert done.returncode == 2, done.stderr
    assert "run `queryloop sessions` to list this project's sessions" in done.stderr
    assert server.requests == []
