"""What `Agent.run()` returns."""

from __future__ import annotations

from dataclasses import dataclass

from ..loop.reasons import Terminal
from ..messages.types import Message
from ..messages.usage import Usage


@dataclass(frozen=True, slots=True)
class RunResult:
    """The outcome of one prompt: why it ended, the final text, and what it cost.

    `turns` counts the prompt's turns (docs/loop.md, "Turns"), the same figure `--max-turns`
    limits and `queryloop sessions` sums. `usage` and `cost_usd` cover every billed request
    the run made, compaction summaries included; `messages` is the session's array after it.
    """

    terminal: Terminal
    text: str
    messages: tuple[Message, ...]
    usage: Usage
    cost_usd: float
    turns: int
    session_id: str
    duration_s: float
    detail: str = ""
    requests: int = 0
    """Billed requests of this run (model turns, compaction summaries, side calls, attempts
    that were cut off): each is in `usage` and `cost_usd` exactly once."""

    @property
    def is_error(self) -> bool:
        """True unless the loop completed normally."""
        return self.terminal is not Terminal.COMPLETED
