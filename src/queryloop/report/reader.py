"""A session's timeline (`model`), read from its transcript alone (and its subagents'
sidechains).

`read_timeline(path)` turns the JSONL records into plain frozen spans and events: model
requests (start, first token, end, usage, cost), tool calls (start, end, error, denial), loop
transitions, terminals, recovery events and compactions. Old transcripts without timing
records still give the token and cost charts (from their `usage` records); the timeline
charts then say there is nothing to draw.

Subagents: i14's sidechain transcripts live in `<session-id>/subagents/agent-*.jsonl` beside
the session's transcript; the first record is a `meta` record with `sidechain: true`,
`agent_id` and `parent_tool_use_id`. Each becomes a nested lane. Records inside the main file
that carry an `agent_id` field belong to that agent's lane too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..loop.reasons import Continue
from ..messages.serialization import MessageDecodeError, message_from_dict
from ..messages.types import (
    Message,
    SystemMessage,
    SystemSubtype,
    TombstoneMessage,
    TombstoneReason,
)
from ..messages.usage import Usage
from ..session.store import SessionNotFoundError
from ..session.stores import TranscriptRef, as_ref, sidechain_agent_ids, sidechain_subpath
from ..session.timing import TimingEvent
from ..session.transcript import TIMING_RECORD
from .costs import (
    CompactionCost,
    CostBreakdown,
    RequestFigures,
    billed_requests,
    compaction_cost,
    tally,
)
from .model import (
    Compaction,
    CompactionKind,
    EventKind,
    Lane,
    RequestOutcome,
    RequestSpan,
    SessionTimeline,
    TimelineEvent,
    ToolSpan,
)

MAIN_LANE = "main"


def read_timeline(transcript: Path | str | TranscriptRef) -> SessionTimeline:
    """Read a transcript (in a store, or a `.jsonl` file) and its subagents' sidechains
    into a `SessionTimeline`."""
    ref = as_ref(transcript)
    problems: list[str] = []
    records = _records(ref, problems)
    metadata = _metadata(records)
    builders: dict[str, _LaneBuilder] = {MAIN_LANE: _LaneBuilder(MAIN_LANE, "session")}
    for record in records:
        agent = record.get("agent_id")
        key = str(agent) if agent and record.get("record") != "meta" else MAIN_LANE
        if key not in builders:
            builders[key] = _LaneBuilder(key, f"agent {key[:8]}")
        builders[key].feed(record)
    for side_id in sidechain_agent_ids(ref):
        side_records = _records(ref.sub(sidechain_subpath(side_id)), problems)
        meta = _metadata(side_records)
        agent_id = str(meta.get("agent_id") or side_id)
        label = str(meta.get("agent_type") or meta.get("description") or "agent")
        builder = builders.setdefault(agent_id, _LaneBuilder(agent_id, f"{label} {agent_id[:8]}"))
        builder.parent_tool_use_id = meta.get("parent_tool_use_id")
        for record in side_records:
            builder.feed(record)
    lanes = tuple(b.build() for b in builders.values())
    session_id = str(_first(records, "session_id") or ref.session_id)
    billed = tally(billed_requests(records))
    costs = CostBreakdown(*billed, compactions=_compaction_costs(lanes[0]))
    return SessionTimeline(
        session_id, ref.path, metadata, lanes, tuple(problems), costs, location=ref.location
    )


def _compaction_costs(lane: Lane) -> tuple[CompactionCost, ...]:
    """Each compaction of `lane` with the main requests it shrank (until the next one)."""
    ok = [RequestFigures(r.model, r.usage) for r in lane.requests if r.outcome is RequestOutcome.OK]
    starts = [c.before_request for c in lane.compactions]
    found = []
    for i, c in enumerate(lane.compactions):
        end = starts[i + 1] if i + 1 < len(starts) else len(ok)
        found.append(
            compaction_cost(
                t=c.t,
                kind=str(c.kind),
                cost_usd=c.cost_usd,
                freed_tokens=c.freed,
                after=ok[c.before_request : max(c.before_request, end)],
            )
        )
    return tuple(found)


# ---- reading ------------------------------------------------------------------------------


def _records(ref: TranscriptRef, problems: list[str]) -> list[dict[str, Any]]:
    """Every record of the transcript; what its store could not read is a problem."""
    checked = ref.load_checked()
    if checked is None:
        raise SessionNotFoundError(f"no transcript at {ref.location}")
    records, skipped = checked
    if skipped:
        name = ref.path.name if ref.path is not None else ref.location
        problems.append(f"{name}: {len(skipped)} unreadable line(s) skipped")
    return records


def _metadata(records: list[dict[str, Any]]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for record in records:
        if record.get("record") == "meta":
            meta.update({k: v for k, v in record.items() if k not in ("record", "timestamp")})
    return meta


def _first(records: list[dict[str, Any]], key: str) -> Any:
    return next((r[key] for r in records if r.get(key)), None)


def _iso_to_unix(text: Any) -> float | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


# ---- one lane -----------------------------------------------------------------------------


@dataclass
class _LaneBuilder:
    """Accumulates one lane's records in file order."""

    id: str
    label: str
    parent_tool_use_id: str | None = None
    requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[TimelineEvent] = field(default_factory=list)
    boundaries: list[tuple[float, str, int, float]] = field(default_factory=list)
    usage_records: list[dict[str, Any]] = field(default_factory=list)
    side_cost_usd: float = 0.0
    compact_cost_usd: float = 0.0
    """Summary requests since the last compact boundary (its cost when it comes)."""
    has_timing: bool = False

    def feed(self, record: dict[str, Any]) -> None:
        kind = record.get("record")
        if kind == TIMING_RECORD:
            self.has_timing = True
            self._timing(record)
        elif kind == "message":
            self._message(record.get("message"))
        elif kind == "usage" and (record.get("purpose") or record.get("kind", "main") != "main"):
            # Compaction summaries, side calls, interrupted attempts: billed, not turns.
            self.side_cost_usd += float(record.get("cost_usd") or 0.0)
            if record.get("kind") == "compact":
                self.compact_cost_usd += float(record.get("cost_usd") or 0.0)
        elif kind == "usage":
            self.usage_records.append(record)

    def _timing(self, record: dict[str, Any]) -> None:
        t = float(record.get("t") or 0.0)
        event = record.get("event")
        rid = str(record.get("request") or "")
        if event == TimingEvent.REQUEST_START:
            self.requests[rid] = {**record, "start": t}
            self.order.append(rid)
        elif event == TimingEvent.FIRST_TOKEN and rid in self.requests:
            self.requests[rid]["first_token"] = t
        elif event == TimingEvent.REQUEST_END and rid in self.requests:
            self.requests[rid].update(end=t, end_record=record)
        elif event == TimingEvent.TOOL_START:
            self.tools[str(record.get("tool_use_id"))] = {**record, "start": t}
        elif event == TimingEvent.TOOL_END:
            tool = self.tools.setdefault(str(record.get("tool_use_id")), {**record, "start": t})
            tool.update(end=t, is_error=record.get("is_error"), denied=record.get("denied"))
        elif event == TimingEvent.TRANSITION:
            reason = str(record.get("reason"))
            kind = EventKind.RECOVERY if reason in _RECOVERY_TRANSITIONS else EventKind.TRANSITION
            self.events.append(TimelineEvent(t, kind, reason, f"turn {record.get('turn')}"))
        elif event == TimingEvent.TERMINAL:
            detail = str(record.get("detail") or "")
            self.events.append(
                TimelineEvent(t, EventKind.TERMINAL, str(record.get("reason")), detail)
            )

    def _message(self, data: Any) -> None:
        if not isinstance(data, dict):
            return
        try:
            message = message_from_dict(data)
        except (MessageDecodeError, KeyError, TypeError, ValueError):
            return
        t = _iso_to_unix(message.timestamp)
        if t is None:
            return
        self._recovery_from(message, t)

    def _recovery_from(self, message: Message, t: float) -> None:
        if isinstance(message, SystemMessage):
            if message.subtype is SystemSubtype.COMPACT_BOUNDARY:
                trigger = str(message.metadata.get("trigger") or "auto")
                pre = int(message.metadata.get("pre_tokens") or 0)
                self.boundaries.append((t, trigger, pre, self.compact_cost_usd))
                self.compact_cost_usd = 0.0
            elif message.subtype is SystemSubtype.MODEL_FALLBACK:
                self.events.append(
                    TimelineEvent(t, EventKind.RECOVERY, "fallback", message.content)
                )
            elif message.subtype is SystemSubtype.API_ERROR:
                self.events.append(
                    TimelineEvent(t, EventKind.RECOVERY, "api_error", message.content)
                )
        elif (
            isinstance(message, TombstoneMessage) and message.reason == TombstoneReason.STREAM_RETRY
        ):
            self.events.append(TimelineEvent(t, EventKind.RECOVERY, "stream_retry", message.reason))

    def build(self) -> Lane:
        requests = self._request_spans() if self.has_timing else self._requests_from_usage()
        tools = tuple(sorted((_tool_span(d) for d in self.tools.values()), key=lambda s: s.start))
        compactions = _compactions(self.boundaries, requests)
        events = [*self.events, *_compaction_events(compactions)]
        return Lane(
            id=self.id,
            label=self.label,
            parent_tool_use_id=self.parent_tool_use_id,
            requests=requests,
            tools=tools,
            events=tuple(sorted(events, key=lambda e: e.t)),
            compactions=compactions,
            has_timing=self.has_timing,
            side_cost_usd=self.side_cost_usd,
        )

    def _request_spans(self) -> tuple[RequestSpan, ...]:
        spans: list[RequestSpan] = []
        for index, rid in enumerate(self.order):
            data = self.requests[rid]
            end = data.get("end_record") or {}
            if "end" in data:
                outcome = RequestOutcome.OK
            elif index + 1 < len(self.order):
                outcome = RequestOutcome.ABANDONED
            else:
                outcome = RequestOutcome.FAILED
            spans.append(
                RequestSpan(
                    request=rid,
                    turn=int(data.get("turn") or 0),
                    model=str(end.get("model") or data.get("model") or ""),
                    start=float(data["start"]),
                    first_token=data.get("first_token"),
                    end=data.get("end"),
                    usage=Usage.from_dict(end.get("usage")),
                    cost_usd=float(end.get("cost_usd") or 0.0),
                    stop_reason=end.get("stop_reason"),
                    window=int(data.get("window") or 0),
                    autocompact_at=int(data.get("autocompact_at") or 0),
                    outcome=outcome,
                )
            )
        return tuple(spans)

    def _requests_from_usage(self) -> tuple[RequestSpan, ...]:
        """Transcripts older than timing records: one span per usage record, no durations."""
        spans = []
        for index, record in enumerate(self.usage_records):
            t = _iso_to_unix(record.get("timestamp")) or float(index)
            spans.append(
                RequestSpan(
                    request=f"usage-{index}",
                    turn=index + 1,
                    model=str(record.get("model") or ""),
                    start=t,
                    end=t,
                    usage=Usage.from_dict(record.get("usage")),
                    cost_usd=float(record.get("cost_usd") or 0.0),
                )
            )
        return tuple(spans)


_RECOVERY_TRANSITIONS = frozenset(
    {
        Continue.MAX_OUTPUT_TOKENS_ESCALATE,
        Continue.MAX_OUTPUT_TOKENS_RECOVERY,
        Continue.REACTIVE_COMPACT_RETRY,
        Continue.COLLAPSE_DRAIN_RETRY,
    }
)
"""The loop's continue reasons that recover from a failure (shown as recovery events)."""

SERVER_SIDE_MIN_DROP = 1_000
"""A request whose context is this much smaller than the previous one's, with no local
compaction between them, is marked as a server-side compaction."""


def _tool_span(data: dict[str, Any]) -> ToolSpan:
    return ToolSpan(
        tool_use_id=str(data.get("tool_use_id") or ""),
        name=str(data.get("name") or "?"),
        start=float(data["start"]),
        end=data.get("end"),
        is_error=bool(data.get("is_error")),
        denied=bool(data.get("denied")),
        request=data.get("request"),
    )


def _compactions(
    boundaries: list[tuple[float, str, int, float]], requests: tuple[RequestSpan, ...]
) -> tuple[Compaction, ...]:
    ok = [r for r in requests if r.outcome is RequestOutcome.OK]
    found: list[Compaction] = []
    for t, trigger, pre, cost in boundaries:
        after = next((i for i, r in enumerate(ok) if r.start >= t), None)
        post = ok[after].context_tokens if after is not None else None
        kind = _KINDS.get(trigger, CompactionKind.AUTO)
        index = after if after is not None else len(ok)
        found.append(Compaction(t, kind, pre, post, index, cost))
    local = {c.before_request for c in found}
    for index in range(1, len(ok)):
        before, now = ok[index - 1].context_tokens, ok[index].context_tokens
        if index not in local and before - now >= SERVER_SIDE_MIN_DROP:
            found.append(
                Compaction(ok[index].start, CompactionKind.SERVER_SIDE, before, now, index)
            )
    return tuple(sorted(found, key=lambda c: c.t))


_KINDS = {
    "auto": CompactionKind.AUTO,
    "reactive": CompactionKind.REACTIVE,
    "manual": CompactionKind.MANUAL,
}


def _compaction_events(compactions: tuple[Compaction, ...]) -> list[TimelineEvent]:
    events = []
    for c in compactions:
        freed = f"freed {c.freed:,} tokens" if c.freed is not None else "freed: unknown"
        events.append(TimelineEvent(c.t, EventKind.COMPACTION, f"compact ({c.kind})", freed))
    return events
