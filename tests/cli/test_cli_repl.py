"""The REPL in a pseudo-terminal: prompt, streamed text, a tool call, Ctrl-C, /cost, /exit."""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect
import pytest
from cli_helpers import cli_env, project

from queryloop.testing import MessagesServer, text, tool_use, turn

# Long enough (~25 s at this event delay) that Ctrl-C always lands mid-stream, even on a
# loaded machine; the abort ends it early, so the test does not wait for it.
LONG = " ".join(f"word{i}" for i in range(2000))


@pytest.mark.parametrize("term", ["dumb", "xterm-256color"])
def test_repl_prompt_tool_call_interrupt_cost_exit(tmp_path: Path, term: str) -> None:
    script = [
        turn(text("Checking now."), tool_use("Bash", {"command": "echo tool-marker"})),
        turn(text("All done here.")),
        turn(text(LONG)),
    ]
    with MessagesServer(script, event_delay=0.02) as server:
        env = cli_env(server.base_url, tmp_path, TERM=term, COLUMNS="120", LINES="40")
        child = pexpect.spawn(
            sys.executable,
            ["-m", "queryloop.cli.main", "--allowed-tools", "Bash(echo:*)"],
            cwd=str(project(tmp_path)), env=env, encoding="utf-8", timeout=60,
            dimensions=(40, 120),
        )  # fmt: skip
        try:
            # prompt_toolkit draws "> " as ">" plus cursor moves; the dumb reader prints it.
            prompt = "> " if term == "dumb" else ">\x08"
            child.expect("/help for commands")
            child.expect(prompt)
            child.sendline("please check")
            child.expect("Checking now.")
            child.expect("Bash")
            child.expect("echo tool-marker")
            child.expect("tool-marker")
            child.expect("All done here.")
            child.expect(prompt)

            child.sendline("tell me a long story")
            child.expect("word3")  # streaming has begun
            child.sendintr()
            child.expect("Interrupted")
            assert "word1999" not in child.before
            child.expect(prompt)

            child.sendline("/cost")
            child.expect(r"Total cost:\s+\$")
            child.expect("Model turns:")
            child.expect(prompt)
            child.sendline("/exit")
            child.expect(pexpect.EOF)
        finally:
            child.close(force=True)
        assert child.exitstatus == 0
        assert all(v == [] for v in server.violations)
