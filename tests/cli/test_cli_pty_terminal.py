"""The terminal a person sees (issue 13, section 4), in the real REPL in a pty: the spinner
while waiting, edits as coloured diffs, [a]lways with its rule and file, Tab completion, and
the last exchanges on --continue."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pytest
from cli_helpers import COMMAND, cli_env, project
from pty_support import HeldModel, ReplChild

from queryloop.testing import MessagesServer, text, tool_use, turn

pytestmark = pytest.mark.slow

XTERM = "xterm-256color"
RED, GREEN = re.escape("\x1b[31m"), re.escape("\x1b[32m")  # rich's red and green


def _start(made: list[ReplChild], server: MessagesServer, tmp_path: Path, *args: str) -> ReplChild:
    repl = ReplChild(server.base_url, tmp_path, XTERM, *args)
    made.append(repl)
    repl.started()
    return repl


def test_spinner_shows_elapsed_time_then_tokens(tmp_path: Path, children: list[ReplChild]) -> None:
    story = " ".join(f"word{i}" for i in range(400))
    model = HeldModel([turn(text(story))], hold={0})
    with MessagesServer(model, event_delay=0.01) as server:
        try:
            repl = _start(children, server, tmp_path)
            repl.sendline("think first")
            repl.wait_until(model.held.is_set)
            repl.expect(r"Thinking… [1-9]\d*s · Ctrl-C to interrupt")  # seconds, before a token
            model.release()
            repl.expect(r"Writing… \d+s · ↓ \d+ tokens")  # streaming: tokens so far
            repl.expect("word399")
            repl.expect_prompt()
        finally:
            model.release()


def test_edit_is_a_coloured_diff_at_the_prompt_and_after(
    tmp_path: Path, children: list[ReplChild]
) -> None:
    source = project(tmp_path) / "calc.py"
    source.write_text("def total(a, b):\n    return a - b\n")
    edit = {"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}
    script = [
        turn(tool_use("Read", {"file_path": "calc.py"})),  # Edit needs the file read first
        turn(text("Fixing."), tool_use("Edit", edit)),
        turn(text("Fixed.")),
    ]
    with MessagesServer(script) as server:
        repl = _start(children, server, tmp_path)
        repl.sendline("fix the sign")
        repl.expect("Allow Edit")
        repl.expect(RED + r"-    return a - b")
        repl.expect(GREEN + r"\+    return a \+ b")
        repl.expect(r"\[a\]lways")
        repl.sendline("y")
        repl.expect("1 added, 1 removed")
        repl.expect(GREEN + r"\+    return a \+ b")
        repl.expect("Fixed.")
        repl.expect_prompt()
    assert "return a + b" in source.read_text()


def test_always_names_the_rule_saves_it_and_does_not_ask_again(
    tmp_path: Path, children: list[ReplChild]
) -> None:
    script = [
        turn(tool_use("Bash", {"command": "echo first-run"})),
        turn(text("ran once")),
        turn(tool_use("Bash", {"command": "echo second-run"})),
        turn(text("ran twice")),
        turn(tool_use("Bash", {"command": "date && uname"})),
        turn(text("chained done")),
    ]
    with MessagesServer(script) as server:
        repl = _start(children, server, tmp_path)
        repl.sendline("run it")
        repl.expect(r"\[a\]lways")
        repl.sendline("a")
        repl.expect(r"Added allow rule Bash\(echo:\*\)")
        repl.expect(r"settings\.local\.json")
        repl.expect("ran once")
        repl.expect_prompt()
        repl.sendline("again")
        index = repl.expect([r"\[a\]lways", "ran twice"])
        assert index == 1, "the identical call asked again"
        repl.expect_prompt()
        repl.sendline("now chained")
        repl.expect(r"No \[a\]lways for this call: it chains several commands")
        repl.expect(r"\[y\]es / \[n\]o")
        repl.sendline("n")
        repl.expect("chained done")
        repl.expect_prompt()
    saved = json.loads((project(tmp_path) / ".queryloop" / "settings.local.json").read_text())
    assert saved == {"permissions": {"allow": ["Bash(echo:*)"]}}


def test_tab_completes_commands_and_file_mentions(
    tmp_path: Path, children: list[ReplChild]
) -> None:
    (project(tmp_path) / "notes_for_tab.txt").write_text("the secret word is pelican\n")
    with MessagesServer([turn(text("read it"))]) as server:
        repl = _start(children, server, tmp_path)
        repl.child.send("/cos\t")
        time.sleep(0.5)
        repl.child.send("\r")
        repl.expect(r"Total cost:")
        repl.expect_prompt()
        repl.child.send("summarise @notes_fo\t")
        time.sleep(0.5)
        repl.child.send("\r")
        repl.expect("read it")
        repl.expect_prompt()
        body = json.dumps(server.requests[-1])
    assert "notes_for_tab.txt" in body and "pelican" in body


GREET = """---
name: greet
description: Greet the user warmly.
---
GREET-SKILL-BODY: say hello to $ARGUMENTS.
"""


def test_tab_completes_skills_too(tmp_path: Path, children: list[ReplChild]) -> None:
    folder = tmp_path / "home" / "skills" / "greet"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(GREET)
    with MessagesServer([turn(text("Hello, Ada!"))]) as server:
        repl = _start(children, server, tmp_path)
        repl.child.send("/gr\t")  # the session may still be starting: Tab waits for it
        repl.expect("eet")  # "/greet" in the input line
        repl.child.send(" Ada\r")
        repl.expect("Hello, Ada!")
        repl.expect_prompt()
        body = json.dumps(server.requests[-1]["messages"])
    assert "GREET-SKILL-BODY: say hello to Ada." in body


def test_continue_shows_the_last_exchanges(tmp_path: Path, children: list[ReplChild]) -> None:
    script = [turn(text("the first answer")), turn(text("the second answer"))]
    with MessagesServer(script) as server:
        for prompt in ("the first question", "the second question"):
            done = subprocess.run(
                [*COMMAND, "-p", prompt, *(["--continue"] if "second" in prompt else [])],
                cwd=project(tmp_path), env=cli_env(server.base_url, tmp_path),
                capture_output=True, text=True, timeout=90,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
        repl = ReplChild(server.base_url, tmp_path, XTERM, "--continue")
        children.append(repl)
        repl.expect("/help for commands")
        repl.expect(r"last 2 exchange\(s\) of this session")
        repl.expect("the first question")
        repl.expect("the first answer")
        repl.expect("the second question")
        repl.expect("the second answer")
        repl.expect_prompt()
