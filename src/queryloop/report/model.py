"""A session's timeline as plain frozen values: model requests (start, first token, end,
usage, cost), tool calls (start, end, error, denial), point events (transitions, terminals,
recoveries, compactions), compactions, one `Lane` for the main session and one per subagent,
and the `SessionTimeline` the report draws. `reader.read_timeline` makes them from a
transcript."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..messages.usage import Usage
from .costs import (
    CostBreakdown,
)


class RequestOutcome(StrEnum):
    """How a model request ended."""

    OK = "ok"
    ABANDONED = "abandoned"
    """No end record and another request followed: a stream retry or a model fallback."""
    FAILED = "failed"
    """No end record and the loop ended: the terminal says why."""


class EventKind(StrEnum):
    """Point events on the time axis."""

    TRANSITION = "transition"
    TERMINAL = "terminal"
    RECOVERY = "recovery"
    COMPACTION = "compaction"


class CompactionKind(StrEnum):
    """What made the context smaller."""

    AUTO = "auto"
    REACTIVE = "reactive"
    MANUAL = "manual"
    SERVER_SIDE = "server-side"
    """Inferred: the context of a request shrank with no local compaction before it (the
    API's context editing cleared tool results)."""


@dataclass(frozen=True, slots=True)
class RequestSpan:
    """One model request."""

    request: str
    turn: int
    model: str
    start: float
    first_token: float | None = None
    end: float | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    stop_reason: str | None = None
    window: int = 0
    autocompact_at: int = 0
    outcome: RequestOutcome = RequestOutcome.OK

    @property
    def context_tokens(self) -> int:
        """The prompt's size: uncached input + cache read + cache write."""
        return self.usage.total_input_tokens


@dataclass(frozen=True, slots=True)
class ToolSpan:
    """One tool call, from the moment it started running to its result."""

    tool_use_id: str
    name: str
    start: float
    end: float | None = None
    is_error: bool = False
    denied: bool = False
    request: str | None = None


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    """A point on the time axis."""

    t: float
    kind: EventKind
    label: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Compaction:
    """A compaction: when, which kind, and how many tokens it freed (when known)."""

    t: float
    kind: CompactionKind
    pre_tokens: int
    post_tokens: int | None = None
    before_request: int = 0
    """Index (in the lane's ok requests) of the first request after it."""
    cost_usd: float = 0.0
    """Its summary request(s): the `compact` usage records since the previous compaction."""

    @property
    def freed(self) -> int | None:
        """Tokens freed: context before minus the next request's context."""
        return None if self.post_tokens is None else max(0, self.pre_tokens - self.post_tokens)


@dataclass(frozen=True, slots=True)
class Lane:
    """The main session or one subagent."""

    id: str
    label: str
    parent_tool_use_id: str | None = None
    requests: tuple[RequestSpan, ...] = ()
    tools: tuple[ToolSpan, ...] = ()
    events: tuple[TimelineEvent, ...] = ()
    compactions: tuple[Compaction, ...] = ()
    has_timing: bool = False
    side_cost_usd: float = 0.0
    """What other billed requests cost (compaction summaries, side calls such as tool-use
    summaries, interrupted attempts): not turns of the loop, so not drawn per request."""


@dataclass(frozen=True, slots=True)
class SessionTimeline:
    """Everything the report draws. `lanes[0]` is the main session."""

    session_id: str
    path: Path | None
    """The transcript's file (the JSONL store); None in a database (see `location`)."""
    metadata: dict[str, Any]
    lanes: tuple[Lane, ...]
    problems: tuple[str, ...] = ()
    costs: CostBreakdown = field(default_factory=CostBreakdown)
    """What caching saved and what each compaction cost and saved (`report.costs`)."""
    location: str = ""
    """Where the transcript is, for a person: its file, or its store and session id."""

    @property
    def main(self) -> Lane:
        """The main session's lane."""
        return self.lanes[0]

    @property
    def t0(self) -> float:
        """The earliest time of any span or event (the axis origin)."""
        times = [t for lane in self.lanes for t in _lane_times(lane)]
        return min(times) if times else 0.0


def _lane_times(lane: Lane) -> Iterator[float]:
    for request in lane.requests:
        yield request.start
    for tool in lane.tools:
        yield tool.start
    for event in lane.events:
        yield event.t
