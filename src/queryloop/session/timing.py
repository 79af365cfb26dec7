"""Timing records: when each request, tool call, transition and terminal happened.

The session report (`queryloop.report`) is built from the transcript alone, so the transcript
says when things happened, not only what. One record kind, `timing`, with an `event` field:

    {"record": "timing", "session_id", "event": <TimingEvent>, "t": <unix seconds>, ...}

| event | fields besides `t` |
|---|---|
| `request_start` | `request` (id), `turn`, `model`, `window`, `autocompact_at` |
| `first_token` | `request` (the first content event of the stream) |
| `request_end` | `request`, `message_id`, `stop_reason`, `usage`, `cost_usd`, `model` |
| `tool_start` | `tool_use_id`, `name`, `request` (the request whose stream held it) |
| `tool_end` | `tool_use_id`, `name`, `is_error`, `denied` |
| `transition` | `reason` (a `queryloop.loop.Continue`), `turn` |
| `terminal` | `reason` (a `queryloop.loop.Terminal`), `turn`, `detail` |

A request that has a start but no end was abandoned (stream retried, model fallback) or
failed (the terminal that follows says so). `t` is wall-clock (`time.time()`) so records of
different processes (a batch resumed on another worker, subagents) share one axis. Readers that
predate these records skip them as an unknown kind; `load_transcript` accepts them silently.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from typing import Any

from ..loop.events import LoopEvent, RequestStart, StreamDelta, TerminalEvent, TransitionEvent
from ..messages.blocks import ToolResultBlock, ToolUseBlock
from ..messages.constructors import tool_result_for
from ..messages.types import Message
from ..messages.usage import Usage
from ..providers.base import (
    BlockStart,
    InputJsonDelta,
    MessageComplete,
    TextDelta,
    ThinkingDelta,
)
from ..tools.base import DenialSource
from .transcript import TIMING_RECORD

DENIAL_MARKERS = ("Permission to use ", "PreToolUse hook denied")
"""How a tool_result that refused the call begins (see `queryloop.tools.execution`)."""


class TimingEvent(StrEnum):
    """The `event` of a timing record."""

    REQUEST_START = "request_start"
    FIRST_TOKEN = "first_token"
    REQUEST_END = "request_end"
    TOOL_START = "tool_start"
    TOOL_END = "tool_end"
    TRANSITION = "transition"
    TERMINAL = "terminal"


RecordSink = Callable[[Mapping[str, Any]], None]
CostFn = Callable[[Usage, str], float]
LimitsFn = Callable[[], tuple[int, int]]
"""() -> (context window, autocompact threshold) in tokens, at the time of a request."""

_FIRST_CONTENT = (BlockStart, TextDelta, ThinkingDelta, InputJsonDelta)


class TimingRecorder:
    """Turns loop events and tool-call notifications into timing records.

    `observe(event)` for every loop event (the Agent does it); as a `ToolObserver` on the
    session's `ToolContext` it records tool starts and ends. `sink` writes one record (the
    transcript's `append_record`); `extra` fields go into every record (a subagent's id).
    """

    def __init__(
        self,
        sink: RecordSink,
        *,
        session_id: Callable[[], str],
        cost: CostFn | None = None,
        limits: LimitsFn | None = None,
        extra: Mapping[str, Any] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._sink = sink
        self._session_id = session_id
        self._cost = cost
        self._limits = limits
        self._extra = dict(extra or {})
        self._clock = clock
        self._request: str | None = None
        self._first_seen = False

    def _write(self, event: TimingEvent, **fields: Any) -> None:
        record: dict[str, Any] = {
            "record": TIMING_RECORD,
            "session_id": self._session_id(),
            "event": event.value,
            "t": round(self._clock(), 6),
        }
        record.update(self._extra)
        record.update(fields)
        try:
            self._sink(record)
        except OSError:  # a full disk must not break the session; the report loses a point
            pass

    # ---- loop events --------------------------------------------------------------------

    def observe(self, event: LoopEvent) -> None:
        """Record what `event` says about timing (most events say nothing)."""
        if isinstance(event, RequestStart):
            self._request_start(event)
        elif isinstance(event, StreamDelta):
            self._stream(event)
        elif isinstance(event, TransitionEvent):
            self._write(TimingEvent.TRANSITION, reason=event.reason.value, turn=event.turn)
        elif isinstance(event, TerminalEvent):
            self._write(
                TimingEvent.TERMINAL,
                reason=event.reason.value,
                turn=event.turn,
                detail=event.detail,
            )
            self._request = None

    def _request_start(self, event: RequestStart) -> None:
        self._request = uuid.uuid4().hex[:12]
        self._first_seen = False
        window, threshold = self._limits() if self._limits is not None else (0, 0)
        self._write(
            TimingEvent.REQUEST_START,
            request=self._request,
            turn=event.turn,
            model=event.model,
            window=window,
            autocompact_at=threshold,
        )

    def _stream(self, delta: StreamDelta) -> None:
        event = delta.event
        if self._request is None:
            return
        if isinstance(event, _FIRST_CONTENT) and not self._first_seen:
            self._first_seen = True
            self._write(TimingEvent.FIRST_TOKEN, request=self._request)
        elif isinstance(event, MessageComplete):
            response = event.response
            cost = self._cost(response.usage, response.model) if self._cost else 0.0
            self._write(
                TimingEvent.REQUEST_END,
                request=self._request,
                message_id=response.id,
                stop_reason=response.stop_reason,
                usage=response.usage.to_dict(),
                cost_usd=cost,
                model=response.model,
            )

    # ---- ToolObserver -------------------------------------------------------------------

    def tool_started(self, block: ToolUseBlock) -> None:
        """A tool call began running."""
        self._write(
            TimingEvent.TOOL_START, tool_use_id=block.id, name=block.name, request=self._request
        )

    def tool_finished(
        self,
        block: ToolUseBlock,
        results: Sequence[Message],
        *,
        permission: DenialSource | None = None,
    ) -> None:
        """A tool call is done (or was refused, cancelled or never ran)."""
        result = tool_result_for(block.id, results)
        is_error = bool(result is not None and result.is_error)
        self._write(
            TimingEvent.TOOL_END,
            tool_use_id=block.id,
            name=block.name,
            is_error=is_error,
            denied=is_error and result is not None and is_denial(result),
        )


def is_denial(result: ToolResultBlock) -> bool:
    """Whether an error result says the call was refused (permissions or a hook)."""
    content = result.content
    text = (
        content if isinstance(content, str) else " ".join(getattr(b, "text", "") for b in content)
    )
    return text.lstrip().startswith(DENIAL_MARKERS)
