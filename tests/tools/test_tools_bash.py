"""Bash: real subprocesses, exit codes, cwd tracking, timeout, output cap."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from tools_test_support import call

from queryloop.tools import ToolContext
from queryloop.tools.builtin import BashTool, is_read_only_command


async def test_stdout_stderr_and_exit_code(ctx: ToolContext) -> None:
    ok = await call(BashTool(), {"command": "echo out; echo err >&2"}, ctx)
    assert (ok.text, ok.is_error) == ("out\nerr", False)
    bad = await call(BashTool(), {"command": "echo partial; exit 3"}, ctx)
    assert bad.is_error and bad.text == "partial\nExit code 3"
    quiet = await call(BashTool(), {"command": "true", "description": "nothing"}, ctx)
    assert quiet.text == "(Command completed with no output)"


async def test_cwd_persists_but_never_leaves_the_working_dirs(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "sub").mkdir()
    await call(BashTool(), {"command": "cd sub"}, ctx)
    assert os.path.realpath(ctx.cwd) == os.path.realpath(tmp_path / "sub")
    here = await call(BashTool(), {"command": "pwd"}, ctx)
    assert here.text == os.path.realpath(tmp_path / "sub")
    # The session's start folder stays a working folder after the cd.
    back = await call(BashTool(), {"command": "cd .."}, ctx)
    assert not back.is_error and os.path.realpath(ctx.cwd) == os.path.realpath(tmp_path)
    away = await call(BashTool(), {"command": "cd / && echo moved"}, ctx)
    assert "moved" in away.text and "Shell cwd was reset" in away.text
    assert os.path.realpath(ctx.cwd) == os.path.realpath(tmp_path)
    exited = await call(BashTool(), {"command": "cd sub; exit 0"}, ctx)
    assert not exited.is_error and ctx.cwd.name == "sub"


async def test_timeout_kills_the_whole_process_group(ctx: ToolContext, tmp_path: Path) -> None:
    command = "sleep 30 & echo $! > child.pid; echo started; wait"
    got = await call(BashTool(), {"command": command, "timeout": 300}, ctx)
    assert got.is_error and "timed out after 300 ms" in got.text and "started" in got.text
    pid = int((tmp_path / "child.pid").read_text())
    for _ in range(200):
        if not _alive(pid):
            break
        await asyncio.sleep(0.01)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


async def test_large_output_keeps_head_and_tail(ctx: ToolContext) -> None:
    command = "echo FIRST; head -c 200000 /dev/zero | tr '\\0' 'x'; echo; echo LAST"
    got = await call(BashTool(), {"command": command}, ctx)
    assert got.text.startswith("FIRST") and got.text.endswith("LAST")
    assert "characters truncated" in got.text and len(got.text) < 31_000


async def test_env_and_bad_input(ctx: ToolContext) -> None:
    ctx.env["QL_TEST_VALUE"] = "42"
    assert (await call(BashTool(), {"command": "echo $QL_TEST_VALUE"}, ctx)).text == "42"
    too_long = await call(BashTool(), {"command": "true", "timeout": 700_000}, ctx)
    assert too_long.is_error and "`timeout`" in too_long.text
    empty = await call(BashTool(), {"command": "  "}, ctx)
    assert empty.is_error and "empty" in empty.text


@pytest.mark.parametrize(
    ("command", "safe"),
    [
        ("ls -la src", True),
        ("git status", True),
        ("git log --oneline -5", True),
        ("grep -rn foo src", True),
        ("find . -name x.py", True),
        ("wc -l a.txt", True),
        ("find . -delete", False),
        ("git push", False),
        ("rm -rf build", False),
        ("ls; rm x", False),
        ("cat a | sh", False),
        ("echo $(whoami)", False),
        ("cat a > b", False),
        ("ls 'unterminated", False),
        ("", False),
    ],
)
def test_read_only_allowlist(command: str, safe: bool) -> None:
    assert is_read_only_command(command) is safe
    tool = BashTool()
    parsed = tool.input_model(command=command)
    assert tool.is_concurrency_safe(parsed) is safe and tool.is_read_only(parsed) is safe
    assert tool.permission_subject(parsed) == (command or None)


async def test_background_job_holding_the_pipe_does_not_hang(
    ctx: ToolContext, tmp_path: Path
) -> None:
    got = await call(BashTool(), {"command": "sleep 20 & echo $! > bg.pid; echo hi"}, ctx)
    pid = int((tmp_path / "bg.pid").read_text())
    try:
        assert (got.text, got.is_error) == ("hi", False)
    finally:
        os.kill(pid, 9)


async def test_vanished_cwd_falls_back_to_the_start_folder(
    ctx: ToolContext, tmp_path: Path
) -> None:
    (tmp_path / "gone").mkdir()
    await call(BashTool(), {"command": "cd gone"}, ctx)
    (tmp_path / "gone").rmdir()
    got = await call(BashTool(), {"command": "pwd"}, ctx)
    assert got.text.startswith(os.path.realpath(tmp_path)) and "no longer exists" in got.text
    assert ctx.cwd == tmp_path


async def test_exit_1_of_grep_means_no_match_not_failure(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    no_match = await call(BashTool(), {"command": "grep zzz a.txt"}, ctx)
    assert not no_match.is_error and "Exit code 1" in no_match.text
    missing = await call(BashTool(), {"command": "grep zzz missing.txt"}, ctx)
    assert missing.is_error and "Exit code 2" in missing.text
    chained = await call(BashTool(), {"command": "true && grep zzz a.txt"}, ctx)
    assert chained.is_error
