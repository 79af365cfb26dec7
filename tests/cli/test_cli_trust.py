"""Workspace trust from the command line: an untrusted project's hook does not run and the
user is told why; `--trust` records the trust and the hook runs; the REPL asks once."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest
from cli_helpers import COMMAND, cli_env, project, run_cli, user_texts
from pty_support import ReplChild
from rich.console import Console

from queryloop.cli.args import parse_args
from queryloop.cli.repl import Repl
from queryloop.config import is_trusted
from queryloop.testing import MessagesServer, text, tool_use, turn


def project_with_hook(tmp_path: Path) -> tuple[Path, Path]:
    """A project whose settings run a hook that leaves a marker file."""
    folder = project(tmp_path)
    marker = tmp_path / "hook-ran"
    settings = {
        "hooks": {
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": f"touch {marker}"}]}]
        }
    }
    (folder / ".queryloop").mkdir()
    (folder / ".queryloop" / "settings.json").write_text(json.dumps(settings))
    return folder, marker


def test_untrusted_project_hook_is_ignored_with_a_notice(tmp_path: Path) -> None:
    _, marker = project_with_hook(tmp_path)
    with MessagesServer([turn(text("hi"))]) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "hello")
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    assert "notice:" in done.stderr and "trust" in done.stderr.lower()


def test_trust_flag_records_trust_and_the_hook_runs(tmp_path: Path) -> None:
    folder, marker = project_with_hook(tmp_path)
    with MessagesServer([turn(text("hi")), turn(text("again"))]) as server:
        first = run_cli(server.base_url, tmp_path, "-p", "hello", "--trust")
        assert first.returncode == 0, first.stderr
        assert marker.exists()
        marker.unlink()
        second = run_cli(server.base_url, tmp_path, "-p", "hello again")
    assert second.returncode == 0, second.stderr
    assert marker.exists(), "trust was recorded for later runs"
    assert is_trusted(folder, tmp_path / "home")


@pytest.mark.parametrize("answer", ["y", "n"])
async def test_repl_asks_whether_to_trust_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answer: str
) -> None:
    folder, marker = project_with_hook(tmp_path)
    with MessagesServer([turn(text("hello there"))]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("QUERYLOOP_HOME", str(tmp_path / "home"))
        inputs = [answer, "hi", "/exit"]
        prompts: list[str] = []

        async def read_line(prompt: str) -> str:
            prompts.append(prompt)
            return inputs.pop(0)

        options = parse_args(["--cwd", str(folder)])
        assert options is not None
        console = Console(file=io.StringIO(), width=100)
        await Repl(options, console=console, read_line=read_line).run()
    assert "Trust this folder" in prompts[0]
    assert marker.exists() is (answer == "y")
    assert is_trusted(folder, tmp_path / "home") is (answer == "y")


SCRIPT_BODY = "SCRIPT-BODY-MARKER"
"""A line deep in a hook's script: no notice prints a hook's whole script."""


def claude_project(tmp_path: Path) -> Path:
    """A project configured only under `.claude/` (as Claude Code users' repositories are):
    settings with three hooks (one a long failing SessionStart script) and an allow rule, an
    agent, and a `.mcp.json` server."""
    folder = project(tmp_path)
    script = f"echo starting >&2\n# {SCRIPT_BODY}\nexit 1"
    hooks = {
        "SessionStart": [{"hooks": [{"type": "command", "command": script}]}],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]},
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "true"}]},
        ],
    }
    settings = {"hooks": hooks, "permissions": {"allow": ["Bash(touch made.txt)"]}}
    (folder / ".claude" / "agents").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text(json.dumps(settings))
    (folder / ".claude" / "agents" / "helper.md").write_text(
        "---\nname: helper\ndescription: helps\n---\nHelp.\n"
    )
    server = {"command": "python", "args": ["-c", "pass"]}
    (folder / ".mcp.json").write_text(json.dumps({"mcpServers": {"srv": server}}))
    return folder


def test_an_untrusted_claude_folder_gets_one_summary_and_a_denial_that_says_why(
    tmp_path: Path,
) -> None:
    """-p in an untrusted folder: one notice counting what was ignored (no hook's script, one
    prefix), and a call its ignored allow rule names is denied saying the folder is not
    trusted and how to trust it — not "add the allow rule" it already has."""
    folder = claude_project(tmp_path)
    script = [turn(tool_use("Bash", {"command": "touch made.txt"})), turn(text("done"))]
    with MessagesServer(script) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "make it")
        assert done.returncode == 0, done.stderr
        result = "\n".join(user_texts(server.requests[1]))
    assert not (folder / "made.txt").exists()
    notices = [line for line in done.stderr.splitlines() if "not trusted" in line]
    assert len(notices) == 1, done.stderr
    (notice,) = notices
    assert ".claude/settings.json (3 hooks, 1 allow/ask rule)" in notice
    assert ".mcp.json (1 MCP server: srv)" in notice and "1 agent" in notice
    assert "queryloop trust --show" in notice and "queryloop trust`" in notice
    assert SCRIPT_BODY not in done.stderr
    assert "notice: settings warning" not in done.stderr
    assert "Bash(touch made.txt)" in result and "not trusted" in result
    assert "queryloop trust" in result and "add the allow rule" not in result


def test_trust_show_lists_what_the_folder_would_run(tmp_path: Path) -> None:
    folder = claude_project(tmp_path)
    done = subprocess.run(
        [*COMMAND, "trust", "--show", str(folder)],
        env=cli_env("http://127.0.0.1:9", tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert f"{folder} is not trusted" in done.stdout
    assert ".claude/settings.json (3 hooks, 1 allow/ask rule)" in done.stdout
    assert SCRIPT_BODY in done.stdout  # in full, when asked for
    assert not is_trusted(folder, tmp_path / "home")


def test_the_repl_asks_about_a_claude_only_folder_and_warns_once_in_words(
    tmp_path: Path,
) -> None:
    """In a real terminal: the trust question names `.claude/settings.json` and its hooks,
    `.mcp.json`'s server and the agent; trusted, the failing SessionStart hook is reported
    once, in words, above the prompt (not as a repr, not twice)."""
    claude_project(tmp_path)
    with MessagesServer([turn(text("the answer"))]) as server:
        repl = ReplChild(server.base_url, tmp_path, "xterm-256color")
        try:
            repl.expect("Do you trust the files in this folder")
            repl.expect("Trust this folder")
            asked = "".join(repl.transcript)
            assert ".claude/settings.json (3 hooks, 1 allow/ask rule)" in asked
            assert ".mcp.json (1 MCP server: srv)" in asked and "1 agent" in asked
            assert SCRIPT_BODY not in asked
            repl.sendline("y")
            repl.started()
            repl.sendline("hello")
            repl.expect("the answer")
            repl.expect_prompt()
            assert repl.exit() == 0
        finally:
            repl.close()
    shown = "".join(repl.transcript)
    assert shown.count("SessionStart hook 'echo starting >&2 …'") == 1, shown
    assert "HookWarning(" not in shown and "hook warning:" not in shown
