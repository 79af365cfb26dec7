"""The real `queryloop` REPL in a pseudo-terminal (pexpect) against a local MessagesServer.

Timing rule for tests on a loaded 2-core CI machine: every `expect` has a generous timeout,
and a "back within a second" claim is asserted on measured timestamps with slack
(`RETURN_BOUND_S`), against scripts whose work would otherwise take tens of seconds — so a
regression is a difference of 30 s against 4 s, never of 1.1 s against 0.9 s.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
from cli_helpers import cli_env, project

from queryloop.testing import Turn

RETURN_BOUND_S = 1.0
"""What the REPL promises: back at its prompt within a second of Ctrl-C."""
SLACK_S = 3.0
"""Added for a loaded machine (process scheduling, pty reads); the stalls tested are 30 s+."""
HOLD_S = 60.0
"""How long a held request or a slow tool would take if the interrupt did not work."""

PROMPTS = {"dumb": "> ", "xterm-256color": ">\x08"}
"""What the main prompt looks like in the pty: the dumb reader prints "> "; prompt_toolkit
draws ">" and moves the cursor back over the space."""


class HeldModel:
    """A scripted model whose listed requests (0-based) wait until `release()` (or HOLD_S):
    the model "thinks" forever, so the only way back to the prompt is the interrupt."""

    def __init__(self, turns: list[Turn], hold: set[int]) -> None:
        self.turns = turns
        self.hold = hold
        self.calls = 0
        self.held = threading.Event()
        """Set once a held request has arrived (the model is now 'thinking')."""
        self._release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Turn:
        with self._lock:
            index = self.calls
            self.calls += 1
        if index in self.hold:
            self.held.set()
            self._release.wait(HOLD_S)
        return self.turns[index]

    def release(self) -> None:
        """Let held requests finish (test teardown)."""
        self._release.set()


class CursorReports:
    """Answers a terminal's cursor-position requests (ESC [6n) as the child's output is read:
    the cursor is at the top left (the whole screen below it)."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child

    def write(self, data: str) -> None:
        """Called with what pexpect read; answers each request in it."""
        for _ in range(data.count("\x1b[6n")):
            self.child.send("\x1b[1;1R")

    def flush(self) -> None:
        """Nothing is buffered."""


class ReplChild:
    """One `queryloop` REPL process in a pty."""

    def __init__(
        self,
        base_url: str,
        tmp_path: Path,
        term: str,
        *args: str,
        columns: int = 120,
        cpr: bool = False,
        **env: str,
    ) -> None:
        self.term = term
        self.prompt = PROMPTS[term]
        self.cwd = project(tmp_path)
        # pexpect does not answer cursor-position requests; prompt_toolkit would wait for
        # them. With `cpr` they are answered (`CursorReports`): prompt_toolkit then knows the
        # height below the cursor and draws the bottom toolbar (the status line).
        no_cpr = {} if cpr else {"PROMPT_TOOLKIT_NO_CPR": "1"}
        environment = cli_env(
            base_url, tmp_path, TERM=term, COLUMNS=str(columns), LINES="40", **no_cpr, **env,
        )  # fmt: skip
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "queryloop.cli.main", *args],
            cwd=str(self.cwd),
            env=environment,
            encoding="utf-8",
            timeout=60,
            dimensions=(40, columns),
        )
        self.transcript: list[str] = []
        if cpr:
            self.child.logfile_read = CursorReports(self.child)

    def expect(self, pattern: Any, timeout: float = 60) -> int:
        """pexpect's expect with a generous default timeout."""
        index: int = self.child.expect(pattern, timeout=timeout)
        self.transcript.append(str(self.child.before) + str(self.child.after))
        return index

    def expect_exact(self, text: str, timeout: float = 60) -> int:
        """pexpect's expect_exact (no regular expression) with a generous default timeout."""
        index: int = self.child.expect_exact(text, timeout=timeout)
        self.transcript.append(str(self.child.before) + str(self.child.after))
        return index

    def started(self) -> None:
        """Wait for the banner and the first prompt."""
        self.expect("/help for commands")
        self.expect_prompt()

    def expect_prompt(self, timeout: float = 60) -> None:
        """Wait for the main prompt."""
        self.expect(self.prompt, timeout=timeout)

    def sendline(self, text: str) -> None:
        """Type a line and Enter."""
        self.child.sendline(text)

    def interrupt(self) -> float:
        """Press Ctrl-C; returns the time it was pressed (time.monotonic())."""
        pressed = time.monotonic()
        self.child.sendintr()
        return pressed

    def seconds_to_prompt(self, pressed: float, *, marker: str = "Interrupted") -> float:
        """Wait for `marker` and then the prompt; the seconds from `pressed` to the prompt."""
        self.expect(marker)
        self.expect_prompt()
        return time.monotonic() - pressed

    def wait_until(self, condition: Callable[[], bool], timeout: float = 60) -> None:
        """Poll `condition` while draining the pty (so the child never blocks on output)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError("condition not met in time; output:\n" + self.output())
            try:
                self.child.read_nonblocking(65536, timeout=0.05)
            except pexpect.TIMEOUT:
                pass

    def exit(self) -> int | None:
        """/exit and wait for the process to end; its exit status."""
        self.sendline("/exit")
        self.expect(pexpect.EOF)
        self.child.close()
        status: int | None = self.child.exitstatus
        return status

    def close(self) -> None:
        """Kill the process if it is still running."""
        if self.child.isalive():
            self.child.close(force=True)

    def output(self) -> str:
        """Everything matched so far (for failure messages)."""
        return "".join(self.transcript)[-4000:]


def assert_back_in_time(seconds: float, what: str) -> None:
    """The REPL returned to its prompt within RETURN_BOUND_S (+ SLACK_S for a loaded box)."""
    assert seconds < RETURN_BOUND_S + SLACK_S, (
        f"{what}: back at the prompt {seconds:.1f} s after Ctrl-C "
        f"(promised {RETURN_BOUND_S} s; the held work takes {HOLD_S:.0f} s)"
    )
