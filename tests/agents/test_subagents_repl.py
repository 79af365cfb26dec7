"""The REPL shows a subagent's steps live under its Agent call, background tasks as they start
and finish, and lists them with /tasks (alias /bashes)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from subagent_support import by_thread, tool_results

from queryloop.cli.args import parse_args
from queryloop.cli.repl import Repl
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn


async def test_repl_shows_subagent_progress_and_lists_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()

    def parent(body: dict[str, Any]) -> Turn:
        done = len(tool_results(body))
        if done == 0:
            return turn(
                tool_use("Agent", {"description": "look around", "prompt": "CHILD-A: list"}),
                tool_use("Bash", {"command": "sleep 30", "run_in_background": True}),
            )
        return turn(text("Delegated."))

    def child(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return turn(text("Listing the folder"), tool_use("LS", {"path": "."}))
        return turn(text("It is empty."))

    with MessagesServer(by_thread(parent, {"CHILD-A": child})) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("QUERYLOOP_HOME", str(tmp_path / "home"))
        monkeypatch.delenv("QUERYLOOP_MODEL", raising=False)
        inputs = ["look around", "/tasks", "/bashes"]

        async def read_line(prompt: str) -> str:
            if not inputs:
                raise EOFError
            return inputs.pop(0)

        buf = io.StringIO()
        options = parse_args(["--cwd", str(proj), "--permission-mode", "bypassPermissions"])
        assert options is not None
        repl = Repl(options, console=Console(file=buf, width=140), read_line=read_line)
        assert await repl.run() == 0
    out = buf.getvalue()
    assert "general-purpose (look around): Listing the folder" in out
    assert "general-purpose (look around) ⏺ LS(.)" in out
    assert "Background task b" in out and "started" in out
    assert out.count("local_bash") == 2 and "running" in out  # /tasks and /bashes
    assert "Delegated." in out
