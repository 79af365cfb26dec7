"""Workspace trust from the command line: an untrusted project's hook does not run and the
user is told why; `--trust` records the trust and the hook runs; the REPL asks once."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from cli_helpers import project, run_cli
from rich.console import Console

from queryloop.cli.args import parse_args
from queryloop.cli.repl import Repl
from queryloop.config import is_trusted
from queryloop.testing import MessagesServer, text, turn


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
