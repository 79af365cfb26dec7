"""Typing while the agent works: lines typed during a turn are queued, not lost.

While a turn runs the terminal is in line mode (prompt_toolkit is not reading), so what the
user types is echoed by the terminal and arrives here line by line, on Enter:

- a prompt is queued on the agent (`Agent.queue`) and shown as `queued: ...`; it reaches
  the model at the next tool-result boundary, in the same turn;
- a line starting with `/` or `#` (a command, a memory line) waits and runs after the turn.

After the turn (`after_turn`): prompts still queued become the next prompt. After Ctrl-C
nothing queued is sent: the queued text is given back (pre-filled in the next input line,
or printed in a dumb terminal) so the user decides. Esc is not a key while a turn runs (line
mode reads whole lines); at the prompt it keeps its editing role (Esc+Enter: new line).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any

from .markup import escape_markup

if TYPE_CHECKING:
    from .host import CommandHost


class TypeAhead:
    """Reads stdin during a turn and routes each line (see the module docstring)."""

    def __init__(self, agent: Any, console: Any, fd: int) -> None:
        self.agent = agent
        self.console = console
        self.fd = fd
        self.later: list[str] = []
        """Commands typed during the turn, to run after it."""
        self._buffer = b""
        self._reading = False

    def start(self) -> None:
        """Begin reading (idempotent)."""
        if not self._reading:
            asyncio.get_running_loop().add_reader(self.fd, self._readable)
            self._reading = True

    def stop(self) -> None:
        """Stop reading (idempotent). A line typed without Enter stays in the terminal."""
        if self._reading:
            asyncio.get_running_loop().remove_reader(self.fd)
            self._reading = False

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Let someone else read stdin (a permission question), then read on."""
        was_reading = self._reading
        self.stop()
        try:
            yield
        finally:
            if was_reading:
                self.start()

    def _readable(self) -> None:
        try:
            data = os.read(self.fd, 4096)
        except OSError:
            data = b""
        if not data:
            self.stop()  # end of input: the prompt after the turn sees it
            return
        self._buffer += data
        while b"\n" in self._buffer:
            raw, self._buffer = self._buffer.split(b"\n", 1)
            self.route(raw.decode("utf-8", errors="replace").rstrip("\r"))

    def route(self, line: str) -> None:
        """Queue a prompt, or keep a command for after the turn."""
        text = line.strip()
        if not text:
            return
        if text.startswith(("/", "#")):
            self.later.append(text)
            self.console.print(f"[dim]after this turn: {escape_markup(text)}[/]", highlight=False)
            return
        self.agent.queue(text)
        self.console.print(
            f"[dim]queued (sent at the next tool result): {escape_markup(text)}[/]", highlight=False
        )


def start_typeahead(agent: Any, console: Any) -> TypeAhead | None:
    """A running `TypeAhead` on stdin for `agent`, or None (stdin is not a terminal). Not for
    a REPL driven by an injected line reader: that one is not reading stdin."""
    import sys

    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return None
    if not os.isatty(fd):
        return None
    typeahead = TypeAhead(agent, console, fd)
    try:
        typeahead.start()
    except (NotImplementedError, RuntimeError, ValueError, OSError):
        return None
    return typeahead


@contextlib.contextmanager
def typeahead_paused(typeahead: TypeAhead | None) -> Iterator[None]:
    """Pause `typeahead`, if one runs, while something else reads stdin."""
    if typeahead is None:
        yield
        return
    with typeahead.paused():
        yield


async def after_turn(
    host: CommandHost,
    typeahead: TypeAhead | None,
    interrupted: bool,
    run_line: Callable[[str], Awaitable[bool]],
) -> bool:
    """Run what was typed during the turn with `run_line` (the REPL's): commands, then the
    queued prompts as the next prompt. After an interrupt queued prompts are given back
    instead. False: the user asked to exit."""
    later = typeahead.later if typeahead is not None else []
    queued = host.agent.take_queued()
    if queued is not None and interrupted:
        host.prefill(queued)
        host.console.print(
            "[yellow]Interrupted: the queued prompt was not sent; it is back in the input:[/] "
            f"{escape_markup(queued)}",
            highlight=False,
        )
        queued = None
    for command in later:
        if not await run_line(command):
            return False
    if queued is not None:
        host.console.print(f"[dim]sending the queued prompt: {escape_markup(queued)}[/]")
        return await run_line(queued)
    return True
