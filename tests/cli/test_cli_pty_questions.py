"""Permission questions as a person sees them in a real terminal (issue 25, items 1 and 2): the
whole command and what it runs and writes, before `[y]es`; a subagent's question says which
subagent asks and nothing draws over it while it waits."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pty_support import ReplChild

from queryloop.testing import MessagesServer, text, tool_use, turn

pytestmark = pytest.mark.slow

XTERM = "xterm-256color"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")
QUESTION = r"\[y\]es / \[n\]o"


def plain(text: str) -> str:
    """Terminal output without colours and cursor moves."""
    return ANSI.sub("", text)


@pytest.fixture
def children() -> Iterator[list[ReplChild]]:
    made: list[ReplChild] = []
    yield made
    for child in made:
        child.close()


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
