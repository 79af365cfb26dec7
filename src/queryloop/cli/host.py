"""What a slash command, a memory line or the type-ahead may use of the REPL: `CommandHost`.

The REPL (`repl.Repl`) owns the session, the terminal and the line reader; the helpers it runs
(`commands`, `memory_cmd`, `rewind`, `typeahead`) get these values, built afresh for each
command, and nothing else — they never see the REPL itself (pydantic-ai's CLI passes its slash
commands explicit values the same way). This module imports nothing at run time, so every
helper can import it and the REPL sits above them all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.console import Console

    from ..agent import Agent
    from ..messages.types import Message

LineReader = Callable[[str], Awaitable[str]]
"""Reads one line of input given a prompt; raises EOFError (exit) or KeyboardInterrupt."""


class InterruptibleCall(Protocol):
    """Runs work so that Ctrl-C stops it; False when it was interrupted (`Repl.interruptible`)."""

    def __call__(
        self, work: Coroutine[Any, Any, Any], *, notice: str | None = None
    ) -> Awaitable[bool]: ...


class AgentReplacer(Protocol):
    """Swaps the REPL's agent for one built from changed options (`--model`, `--resume`);
    returns the new agent, already started (`Repl.replace_agent`)."""

    def __call__(self, **changes: Any) -> Awaitable[Agent]: ...


@dataclass(frozen=True)
class CommandHost:
    """The REPL as a command sees it: the agent of the moment and the REPL's services."""

    agent: Agent
    """The session's agent when the command started (`replace_agent` returns the next)."""
    console: Console
    """Where to print (rich markup)."""
    cwd: Path
    """The working folder."""
    read_line: LineReader
    """Ask the user for a line (a question of the command's own)."""
    prefill: Callable[[str], None]
    """Put text into the next input line, to edit or send."""
    replace_agent: AgentReplacer
    """Swap the agent (/model, /resume)."""
    interruptible: InterruptibleCall
    """Run work that Ctrl-C may stop (/compact)."""
    show_recent: Callable[[Sequence[Message]], None]
    """Show the last exchanges of a conversation (after /resume)."""
