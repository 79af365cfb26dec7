"""Custom slash commands through the real `queryloop` command: `-p "/name args"` headless,
`!` lines refused in print mode, `/help` and Tab completion in the REPL."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import project, run_cli, user_texts
from prompt_toolkit.document import Document
from rich.console import Console

from queryloop.cli.args import parse_args
from queryloop.cli.commands import COMMANDS
from queryloop.cli.completion import ReplCompleter, help_table
from queryloop.cli.repl import Repl
from queryloop.testing import MessagesServer, text, turn

REVIEW = """---
description: Review a file for bugs
argument-hint: "[file]"
---
CLI-REVIEW-BODY: review $ARGUMENTS.
Made: !`touch made-by-print-mode.txt`
"""


def write_review(folder: Path) -> None:
    commands = folder / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(REVIEW)


def test_print_mode_runs_a_project_command(tmp_path: Path) -> None:
    write_review(project(tmp_path))
    with MessagesServer([turn(text("Looks fine."))]) as server:
        done = run_cli(
            server.base_url, tmp_path, "--trust", "-p", "/review src/x.py",
            "--output-format", "json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "Looks fine."
    sent = "\n".join(user_texts(server.requests[0]))
    assert "/review src/x.py" in sent and "CLI-REVIEW-BODY: review src/x.py." in sent
    # The `!` line writes a file: nobody can approve it in print mode, so it did not run.
    assert not (project(tmp_path) / "made-by-print-mode.txt").exists()
    assert "the command `touch made-by-print-mode.txt` was not run" in sent
    assert [d["tool_input"]["command"] for d in result["permission_denials"]] == [
        "touch made-by-print-mode.txt"
    ]


def test_an_untrusted_projects_commands_do_not_run(tmp_path: Path) -> None:
    write_review(project(tmp_path))
    with MessagesServer([turn(text("ok"))]) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "/review src/x.py")
    assert done.returncode == 0, done.stderr
    assert "CLI-REVIEW-BODY" not in json.dumps(server.requests[0])


async def test_repl_help_and_tab_list_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = project(tmp_path)
    write_review(proj)
    user_commands = tmp_path / "claude" / "commands" / "git"
    user_commands.mkdir(parents=True)
    (user_commands / "log.md").write_text("Show the log.")
    with MessagesServer([turn(text("Reviewed in the REPL."))]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("QUERYLOOP_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
        found: dict[str, str] = {}

        def tab_then_review() -> str:  # what Tab offers after `/`, as the REPL asks it
            completer = ReplCompleter(
                proj, lambda: help_table(COMMANDS.values(), repl.agent.slash_commands)
            )
            for c in completer.get_completions(Document("/"), None):
                found[c.text] = c.display_meta_text
            return "/review a.py"

        inputs: list[str | Callable[[], str]] = ["/help", tab_then_review]

        async def read_line(prompt: str) -> str:
            if not inputs:
                raise EOFError
            item = inputs.pop(0)
            return item() if callable(item) else item

        buf = io.StringIO()
        options = parse_args(["--cwd", str(proj), "--trust"])
        assert options is not None
        repl = Repl(options, console=Console(file=buf, width=160), read_line=read_line)
        assert await repl.run() == 0
    out = buf.getvalue()
    assert "/review [file] (command, project) Review a file for bugs" in out
    assert "/git:log (command, user) Show the log." in out
    assert "Reviewed in the REPL." in out
    assert "CLI-REVIEW-BODY: review a.py." in json.dumps(server.requests[0])
    assert found["/review"] == "command: [file] Review a file for bugs"
    assert "/git:log" in found and "/help" in found
