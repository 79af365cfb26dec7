"""The loop's state: exactly what crosses from one iteration to the next, and how an
iteration ends (`Next` with the State the next one starts from, or `End` with the terminal
event)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeAlias

from ..messages.types import Message
from .events import TerminalEvent
from .reasons import Continue
from .summaries import PendingSummaries

if TYPE_CHECKING:  # a type only: importing the loop does not load the compaction package
    from ..compact.autocompact import AutoCompactTracking


@dataclass(frozen=True, slots=True)
class State:
    """Immutable. The next iteration's State is this one `continued` (or `next_turn`):
    every field carries over unless a reset below names it, so a new field is kept by
    default and never silently reset."""

    messages: tuple[Message, ...]
    model: str
    """The model of this query's requests: the request builder's at the start, the fallback
    model after a fallback (for the rest of the query)."""
    autocompact_tracking: AutoCompactTracking | None = None
    """Owned by the compaction pipeline (its `preprocess` returns the next one); None until
    the first preprocess of a query."""
    max_output_tokens_recovery_count: int = 0
    has_attempted_reactive_compact: bool = False
    max_output_tokens_override: int | None = None
    pending_tool_use_summary: PendingSummaries = field(default_factory=PendingSummaries)
    """Tool-use summaries still being written (see `loop.summaries`); never awaited here."""
    stop_hook_active: bool = False
    turn_count: int = 1
    transition: Continue | None = None
    budget_continuations: int = 0
    """How many token-budget nudges this query has sent (for the diminishing-returns cut-off)."""
    output_tokens: int = 0
    """Output tokens produced by this query so far (token budget accounting)."""
    output_retries: int = 0
    """Structured output: the query's failed attempts so far (invalid StructuredOutput
    calls, and stops without one), bounded by `MAX_STRUCTURED_OUTPUT_RETRIES`."""

    def continued(self, reason: Continue, messages: Sequence[Message]) -> State:
        """The State of the next iteration, going on for `reason` with `messages`. What holds
        for one request only resets: the raised output limit and the stop-hook flag (a site
        that keeps one sets it again)."""
        return replace(
            self,
            messages=tuple(messages),
            transition=reason,
            max_output_tokens_override=None,
            stop_hook_active=False,
        )

    def next_turn(self, messages: Sequence[Message]) -> State:
        """The State of the next turn (`Continue.NEXT_TURN`): `continued`, one turn on, and
        what holds for one turn resets: the output-limit recoveries, and the reactive
        compaction (a turn got through, so a later prompt-too-long may compact again)."""
        return replace(
            self.continued(Continue.NEXT_TURN, messages),
            turn_count=self.turn_count + 1,
            max_output_tokens_recovery_count=0,
            has_attempted_reactive_compact=False,
        )


@dataclass(frozen=True, slots=True)
class Next:
    """An iteration ended by going on: the State the next one starts from (its
    `transition` is the `Continue` reason)."""

    state: State


@dataclass(frozen=True, slots=True)
class End:
    """An iteration ended the query: the terminal event, and the tool-use summaries still
    being written (settled before the terminal event goes out)."""

    terminal: TerminalEvent
    pending: PendingSummaries = field(default_factory=PendingSummaries)


Step: TypeAlias = Next | End
"""How an iteration, or a phase of it, ended: always the last item the phase yields."""
