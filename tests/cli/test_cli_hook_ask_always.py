"""A PreToolUse hook that asks is asked every time: the prompt does not offer `[a]lways`
(issue 25, item 13).

A hook's `ask` is policy: whoever wrote it wants a person to confirm each such call, and it
asks whatever the allow rules say. So an "always" answer could only save a rule that the hook
overrides the next time; the prompt used to offer it anyway (and save the rule). It now says
there is no `[a]lways` for such a call, and asks again next time.

The REPL in-process (injected console and line reader), the real Agent, a real shell hook in
the user's settings, the local Messages API server.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from queryloop.cli.args import parse_args
from queryloop.cli.repl import Repl
from queryloop.testing import MessagesServer, text, tool_use, turn

ASK = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "ask",
        "permissionDecisionReason": "confirm each deploy",
    }
}


async def test_a_hooks_ask_offers_no_always_and_asks_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    hook = {"type": "command", "command": f"echo '{json.dumps(ASK)}'"}
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (home / "settings.json").write_text(json.dumps(settings))
    script = [
        turn(tool_use("Bash", {"command": "echo deploy-one"})),
        turn(text("Deployed once.")),
        turn(tool_use("Bash", {"command": "echo deploy-one"})),
        turn(text("Deployed twice.")),
    ]
    with MessagesServer(script) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("QUERYLOOP_HOME", str(home))
        monkeypatch.delenv("QUERYLOOP_MODEL", raising=False)
        inputs = ["deploy", "y", "deploy again", "y"]
        prompts: list[str] = []

        async def read_line(prompt: str) -> str:
            prompts.append(prompt)
            if not inputs:
                raise EOFError
            return inputs.pop(0)

        buf = io.StringIO()
        options = parse_args(["--cwd", str(proj)])
        assert options is not None
        repl = Repl(options, console=Console(file=buf, width=160), read_line=read_line)
        assert await repl.run() == 0
    out = buf.getvalue()
    asked = [p for p in prompts if p.startswith("[y]es / [n]o")]
    assert len(asked) == 2, out  # asked again: the hook asks every time
    assert all("[a]lways" not in p for p in asked), asked
    assert out.count("No [a]lways for this call") == 2
    assert "confirm each deploy" in out
    assert not (proj / ".queryloop" / "settings.local.json").exists()  # no rule saved
    assert "Deployed twice." in out
