"""The loop's state: exactly what crosses from one iteration to the next."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..messages.types import Message
from .reasons import Continue
from .summaries import PendingSummaries


@dataclass(frozen=True, slots=True)
class State:
    """Immutable; every continue site builds a whole new State (no field is forgotten)."""

    messages: tuple[Message, ...]
    model: str
    """The model of this query's requests: the request builder's at the start, the fallback
    model after a fallback (for the rest of the query)."""
    autocompact_tracking: Any = None
    """Opaque to the loop; owned by the compaction pipeline."""
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
