"""Permission questions as a person sees them in a real terminal (issue 25, items 1 and 2): the
whole command and what it runs and writes, before `[y]es`; a subagent's question says which
subagent asks and nothing draws over it while it waits."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_helpers import project
from pty_support import ReplChild

from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

pytestmark = pytest.mark.slow

XTERM = "xterm-256color"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")
QUESTION = r"\[y\]es / \[n\]o"


def plain(text: str) -> str:
    """Terminal output without colours and cursor moves."""
    return ANSI.sub("", text)


def _start(
    made: list[ReplChild], server: MessagesServer, tmp_path: Path, *args: str, columns: int = 160
) -> ReplChild:
    repl = ReplChild(server.base_url, tmp_path, XTERM, *args, columns=columns)
    made.append(repl)
    repl.started()
    return repl


def test_a_long_command_is_shown_whole_with_what_it_runs_and_writes(
    tmp_path: Path, children: list[ReplChild]
) -> None:
    command = "python3 -c 'print(\"just printing a harmless greeting\")' ; touch /tmp/x/HIDDEN"
    script = [turn(tool_use("Bash", {"command": command})), turn(text("not run then"))]
    with MessagesServer(script) as server:
        repl = _start(children, server, tmp_path)
        repl.sendline("greet me")
        repl.expect(QUESTION)
        asked = plain(repl.transcript[-1])
        repl.sendline("n")
        repl.expect("not run then")
        repl.expect_prompt()
    assert "touch /tmp/x/HIDDEN" in asked, asked  # the side effect, in the question itself
    assert f"Allow Bash({command})?" in asked
    assert re.search(r"runs +python3 -c 'print\(\"just printing a harmless greeting\"\)'", asked)
    assert re.search(r"\n +touch /tmp/x/HIDDEN\n", asked)
    assert re.search(r"writes +/tmp/x/HIDDEN \(touch\)", asked)
    assert re.search(r"unknown +what python3 writes", asked)
    assert not Path("/tmp/x/HIDDEN").exists()


def test_a_command_longer_than_the_terminal_wraps_and_keeps_every_character(
    tmp_path: Path, children: list[ReplChild]
) -> None:
    words = " ".join(f"w{i:03d}" for i in range(60))  # 300 characters on an 80-column terminal
    command = f"echo {words} > notes.txt"
    script = [turn(tool_use("Bash", {"command": command})), turn(text("refused"))]
    with MessagesServer(script) as server:
        repl = _start(children, server, tmp_path, columns=80)
        repl.sendline("write the notes")
        repl.expect(QUESTION)
        asked = plain(repl.transcript[-1]).split("Allow Bash(", 1)[1]
        repl.sendline("n")
        repl.expect("refused")
        repl.expect_prompt()
    assert " ".join(asked.split()).count(words) == 1, asked
    assert max(len(line) for line in asked.splitlines()) <= 80
    assert re.search(r"writes +notes\.txt \(redirection\)", asked)


SPINNER = re.compile("[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]")


def _first_message(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"][0], ensure_ascii=False)


def _results(body: dict[str, Any]) -> int:
    return sum(
        1
        for m in body["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    )


class TwoHelpers:
    """The parent starts two general-purpose subagents at once; A asks to run a command,
    B works on (its steps arrive while A's question waits) and finishes."""

    def __init__(self) -> None:
        self.b_done = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Turn:
        first = _first_message(body)
        done = _results(body)
        if "CHILD-A" in first:
            if not done:
                return turn(text("A looks first"), tool_use("Bash", {"command": "touch a.txt"}))
            return turn(text("A finished"))
        if "CHILD-B" in first:
            if done < 2:
                return turn(text(f"B step {done + 1}"), tool_use("LS", {"path": "."}))
            self.b_done.set()
            return turn(text("B finished"))
        if not done:
            return turn(
                tool_use("Agent", {"description": "count the files", "prompt": "CHILD-A: go"}),
                tool_use("Agent", {"description": "count the lines", "prompt": "CHILD-B: go"}),
            )
        return turn(text("both helpers answered"))


def test_a_subagents_question_names_it_and_nothing_draws_over_it(
    tmp_path: Path, children: list[ReplChild]
) -> None:
    model = TwoHelpers()
    with MessagesServer(model) as server:
        repl = _start(children, server, tmp_path)
        repl.sendline("delegate")
        repl.expect(QUESTION)
        asked = plain(repl.transcript[-1])
        repl.wait_until(model.b_done.is_set)  # B's steps and answer arrive during the question
        quiet = _read_for(repl, 1.5)
        repl.sendline("y")
        repl.expect("both helpers answered")
        repl.expect_prompt()
        after = plain("".join(repl.transcript[-2:]))
    assert "general-purpose (count the files) asks: Allow Bash(touch a.txt)?" in asked, asked
    drawn_meanwhile = plain(quiet)
    assert not SPINNER.search(drawn_meanwhile) and "⎿" not in drawn_meanwhile, drawn_meanwhile
    # Held, then drawn after the answer, each labelled by the subagent it came from.
    assert "general-purpose (count the lines): B step 1" in after + asked
    assert "general-purpose (count the lines): B finished" in after
    assert "general-purpose (count the files): A finished" in after
    assert (project(tmp_path) / "a.txt").exists()


def test_the_spinner_stops_while_the_main_threads_question_waits(
    tmp_path: Path, children: list[ReplChild]
) -> None:
    # The Read's result arrives while the Bash call's question waits (it drew the spinner).
    (project(tmp_path) / "notes.txt").write_text("hello\n")
    calls = [tool_use("Read", {"file_path": "notes.txt"}), tool_use("Bash", {"command": "touch m"})]
    script = [turn(*calls), turn(text("made it"))]
    with MessagesServer(script) as server:
        repl = _start(children, server, tmp_path)
        repl.sendline("make a file")
        repl.expect(QUESTION)
        quiet = plain(_read_for(repl, 2.5))
        repl.sendline("y")
        repl.expect("made it")
        repl.expect_prompt()
    assert not SPINNER.search(quiet) and "Running" not in quiet, quiet
    assert (project(tmp_path) / "m").exists()


def _read_for(repl: ReplChild, seconds: float) -> str:
    """Everything the REPL draws in the next `seconds` (nothing is typed meanwhile)."""
    out: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            out.append(repl.child.read_nonblocking(65536, timeout=0.1))
        except pexpect.TIMEOUT:
            pass
    return "".join(out)
