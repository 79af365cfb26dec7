"""What `Agent.run()` returns."""

from __future__ import annotations

from dataclasses import dataclass

from ..loop.reasons import Terminal
from ..messages.types import Message
from ..messages.usage import Usage


@dataclass(frozen=True, slots=True)
class RunResult:
    """The outcome of one prompt: why it ended, the final text, and what it cost."""

    terminal: Terminal
    text: str
    messages: tuple[Message, ...]
    usage: Usage
    cost_usd: float
    turns: int
    session_id: str
    duration_s: float
    detail: str = ""

    @property
    def is_error(self) -> bool:
        """True unless the loop completed normally."""
        return self.terminal is not Terminal.COMPLETED
