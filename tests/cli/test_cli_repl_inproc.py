"""The REPL in-process with an injected console and line reader, against the real Agent and
the local Messages API server: permission prompts and every slash command."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console

from queryloop.cli.args import parse_args
from queryloop.cli.repl import Repl
from queryloop.testing import MessagesServer, text, tool_use, turn


async def test_repl_permission_prompt_and_slash_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    script = [
        turn(text("I'll run it."), tool_use("Bash", {"command": "echo perm-check"})),
        turn(text("Understood, not running it.")),
        turn(text("Hi again.")),
        turn(text("<summary>The user asked to run a command; it was denied.</summary>")),
    ]
    with MessagesServer(script) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("QUERYLOOP_HOME", str(tmp_path / "home"))
        monkeypatch.delenv("QUERYLOOP_MODEL", raising=False)
        seen: dict[str, str] = {}
        inputs: list[str | Callable[[], str]] = [
            "run it",
            "n",  # the permission prompt: deny
            "/cost",
            "/context",
            "/model claude-haiku-4-5",
            "hello again",
            "/compact keep the numbers",
            lambda: seen.setdefault("first", repl.agent.session_id) and "/clear",
            "/nonsense",
            "/help",
            lambda: f"/resume {seen['first'][:8]}",
        ]
        prompts: list[str] = []

        async def read_line(prompt: str) -> str:
            prompts.append(prompt)
            if not inputs:
                raise EOFError
            item = inputs.pop(0)
            return item() if callable(item) else item

        buf = io.StringIO()
        options = parse_args(["--cwd", str(proj)])
        assert options is not None
        repl = Repl(options, console=Console(file=buf, width=120), read_line=read_line)
        assert await repl.run() == 0
        requests = server.requests
        assert all(v == [] for v in server.violations)
    out = buf.getvalue()
    assert "Allow Bash(echo perm-check)?" in out and "[y]es / [n]o / [a]lways > " in prompts
    assert "Understood, not running it." in out
    denied = json.dumps(requests[1]["messages"][-1]["content"])
    assert '"is_error": true' in denied  # denied: the model is told, the command never ran
    assert "Total cost:" in out and "Cache hits:" in out
    assert "system prompt" in out and "free" in out and "█" in out
    assert "Switched to claude-haiku-4-5." in out
    assert requests[2]["model"] == "claude-haiku-4-5" and "run it" in json.dumps(requests[2])
    assert "keep the numbers" in json.dumps(requests[3]) and "Compacted" in out
    assert "Started a fresh conversation" in out and "Unknown command /nonsense" in out
    assert "/compact" in out  # the help text
    assert f"Resumed session {seen['first']}" in out
