"""Ctrl-C at every moment of a turn, in the real REPL in a pty (issue 13, section 2).

Each test holds the turn at one moment for a minute (a model that does not answer, a slow
stream, a permission prompt, a long command, a summary request that does not return) and
presses Ctrl-C there. The REPL must be back at its prompt within a second (with slack for a
loaded machine: see pty_support), the held work must stop (no further model request, the
command's processes gone), and the next prompt must go out as a valid request.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pty_support import HeldModel, ReplChild, assert_back_in_time

from queryloop.testing import MessagesServer, text, tool_use, turn

pytestmark = pytest.mark.slow

TERMS = ["dumb", "xterm-256color"]
LONG = " ".join(f"word{i}" for i in range(3000))


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[list[ReplChild]]:
    """Children to close at the end of the test, whatever happened."""
    children: list[ReplChild] = []
    yield children
    for child in children:
        child.close()


def _repl(
    children: list[ReplChild], server: MessagesServer, tmp_path: Path, term: str, *args: str
) -> ReplChild:
    repl = ReplChild(server.base_url, tmp_path, term, *args)
    children.append(repl)
    repl.started()
    return repl


def _assert_valid(server: MessagesServer) -> None:
    assert all(v == [] for v in server.violations), server.violations


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ctrl_c_while_waiting_for_the_first_token(tmp_path: Path, spawn: list[ReplChild]) -> None:
    model = HeldModel([turn(text("never sent")), turn(text("second answer"))], hold={0})
    with MessagesServer(model) as server:
        try:
            repl = _repl(spawn, server, tmp_path, "xterm-256color")
            repl.sendline("think hard")
            repl.wait_until(model.held.is_set)
            time.sleep(0.3)  # the spinner is up and the request is in flight
            pressed = repl.interrupt()
            assert_back_in_time(repl.seconds_to_prompt(pressed), "waiting for the first token")
            repl.sendline("again")
            repl.expect("second answer")
            repl.expect_prompt()
            assert repl.exit() == 0
        finally:
            model.release()
        _assert_valid(server)
        texts = [b["text"] for b in server.requests[-1]["messages"][0]["content"]]
        assert texts[-3:] == ["think hard", "[Request interrupted by user]", "again"]


def test_ctrl_c_while_streaming(tmp_path: Path, spawn: list[ReplChild]) -> None:
    script = [turn(text(LONG)), turn(text("next answer"))]
    with MessagesServer(script, event_delay=0.02) as server:
        repl = _repl(spawn, server, tmp_path, "xterm-256color")
        repl.sendline("a long story")
        repl.expect("word5")
        pressed = repl.interrupt()
        assert_back_in_time(repl.seconds_to_prompt(pressed), "streaming")
        assert "word2999" not in repl.output()
        repl.sendline("go on")
        repl.expect("next answer")
        repl.expect_prompt()
        assert repl.exit() == 0
        _assert_valid(server)


@pytest.mark.parametrize("term", TERMS)
def test_ctrl_c_at_the_permission_prompt_denies_and_stops(
    tmp_path: Path, spawn: list[ReplChild], term: str
) -> None:
    script = [
        turn(text("Let me run it."), tool_use("Bash", {"command": "touch never-ran"})),
        turn(text("fresh answer")),
    ]
    with MessagesServer(script) as server:
        repl = _repl(spawn, server, tmp_path, term)
        repl.sendline("run something")
        repl.expect(r"\[a\]lways")
        time.sleep(0.3)
        pressed = repl.interrupt()
        assert_back_in_time(repl.seconds_to_prompt(pressed), "at the permission prompt")
        # Denied and stopped: the command never ran and the model was not asked to go on.
        assert not (repl.cwd / "never-ran").exists()
        assert len(server.requests) == 1
        repl.sendline("something else")
        repl.expect("fresh answer")
        repl.expect_prompt()
        assert repl.exit() == 0
        _assert_valid(server)
        results = [
            b
            for m in server.requests[-1]["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if b["type"] == "tool_result"
        ]
        assert len(results) == 1 and results[0]["is_error"]


@pytest.mark.parametrize("term", TERMS)
def test_ctrl_c_after_answering_the_permission_prompt(
    tmp_path: Path, spawn: list[ReplChild], term: str
) -> None:
    """The reported bug: after "y", Ctrl-C was ignored until the command and the next model
    turn had run to their end (5 of 5 tries)."""
    command = "touch started; sleep 60; touch finished"
    script = [
        turn(text("Running it."), tool_use("Bash", {"command": command})),
        turn(text("SHOULD NOT BE ASKED FOR")),
        turn(text("fresh answer")),
    ]
    with MessagesServer(script) as server:
        repl = _repl(spawn, server, tmp_path, term)
        repl.sendline("run the slow thing")
        repl.expect(r"\[y\]es / \[n\]o")  # a chained command: no [a]lways
        repl.sendline("y")
        repl.wait_until((repl.cwd / "started").exists)
        time.sleep(0.2)
        pressed = repl.interrupt()
        assert_back_in_time(repl.seconds_to_prompt(pressed), "after answering the prompt")
        assert len(server.requests) == 1
        assert not (repl.cwd / "finished").exists()
        repl.sendline("next")
        repl.expect("SHOULD NOT BE ASKED FOR")  # the next prompt gets the next scripted turn
        repl.expect_prompt()
        assert repl.exit() == 0
        _assert_valid(server)


def test_ctrl_c_during_a_tool_kills_its_process_group(
    tmp_path: Path, spawn: list[ReplChild]
) -> None:
    command = "sleep 300 & echo $! > child.pid; wait"
    script = [turn(tool_use("Bash", {"command": command})), turn(text("fresh answer"))]
    with MessagesServer(script) as server:
        repl = _repl(spawn, server, tmp_path, "xterm-256color", "--allowed-tools", "Bash")
        repl.sendline("start a background sleeper")
        pid_file = repl.cwd / "child.pid"
        repl.wait_until(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
        pid = int(pid_file.read_text())
        assert _alive(pid)
        pressed = repl.interrupt()
        assert_back_in_time(repl.seconds_to_prompt(pressed), "during a tool")
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), "the command's child process survived the interrupt"
        repl.sendline("and now?")
        repl.expect("fresh answer")
        repl.expect_prompt()
        assert repl.exit() == 0
        _assert_valid(server)


def test_ctrl_c_during_compact(tmp_path: Path, spawn: list[ReplChild]) -> None:
    model = HeldModel(
        [turn(text("hello there")), turn(text("summary never sent")), turn(text("still here"))],
        hold={1},
    )
    with MessagesServer(model) as server:
        try:
            repl = _repl(spawn, server, tmp_path, "xterm-256color")
            repl.sendline("hi")
            repl.expect("hello there")
            repl.expect_prompt()
            repl.sendline("/compact")
            repl.wait_until(model.held.is_set)
            time.sleep(0.2)
            pressed = repl.interrupt()
            seen = len(repl.transcript)
            assert_back_in_time(repl.seconds_to_prompt(pressed), "during /compact")
            said = "".join(repl.transcript[seen:])
            # One line says what happened (issue 25.7: it said "Interrupted." first, too).
            assert said.count("Interrupted") == 1 and "not compacted" in said, said
            repl.sendline("are you there")
            repl.expect("still here")
            repl.expect_prompt()
            assert repl.exit() == 0
        finally:
            model.release()
        _assert_valid(server)
        # Not compacted: the last request still carries the first exchange.
        texts = [
            b.get("text", "")
            for m in server.requests[-1]["messages"]
            for b in (m["content"] if isinstance(m["content"], list) else [])
        ]
        assert "hello there" in texts
