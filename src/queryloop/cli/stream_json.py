"""Print mode's JSON wire format (docs/cli.md, "Print mode output"): a record per loop event
and the final `result` object, built from what the Agent reports (`RunResult`).

Every `type` on the wire is written out here, in two tables: `PROVIDER_EVENT_TYPES` (the
`event` of a `stream_event` line) and `_LOOP_RECORDS` (one builder per loop event class, or
None for an event that is not emitted). Renaming a Python class never changes the format,
and a new event class has no line until it is given a name here (a test checks that every
class of the `LoopEvent` and `StreamEvent` unions is in a table).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..loop.events import (
    ApiRetry,
    CompactionEvent,
    MessageDraft,
    MessageEvent,
    RequestStart,
    SideUsage,
    StreamDelta,
    TerminalEvent,
    TransitionEvent,
)
from ..messages.blocks import block_to_api
from ..messages.serialization import message_to_dict
from ..messages.types import Message, SystemMessage, SystemSubtype
from ..messages.usage import Usage
from ..providers.base import (
    BlockComplete,
    BlockStart,
    InputJsonDelta,
    MessageComplete,
    MessageDelta,
    MessageStart,
    TextDelta,
    ThinkingDelta,
)
from ..tasks.events import TaskEvent
from .exit_codes import exit_code_for

if TYPE_CHECKING:
    from ..agent import Agent, RunResult

PROVIDER_EVENT_TYPES: Mapping[type, str] = {
    MessageStart: "message_start",
    BlockStart: "block_start",
    TextDelta: "text_delta",
    ThinkingDelta: "thinking_delta",
    InputJsonDelta: "input_json_delta",
    BlockComplete: "block_complete",
    MessageDelta: "message_delta",
    MessageComplete: "message_complete",
}
"""`stream_event.event.type` for each canonical provider event."""

_BLOCK_TYPES = frozenset(
    {"text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document"}
)


def jsonable(value: Any) -> Any:
    """A JSON-ready form of events, blocks, usage and plain data."""
    if isinstance(value, Usage):
        return value.to_dict()
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        kind = getattr(value, "type", None)
        if isinstance(kind, str) and kind in _BLOCK_TYPES:
            return block_to_api(value)  # type: ignore[arg-type]
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def message_record(message: Message, session_id: str) -> dict[str, Any]:
    """`{"type": <message type>, "session_id", "message": message_to_dict(...)}`; system
    messages also carry their `subtype`."""
    record: dict[str, Any] = {"type": message.type, "session_id": session_id}
    subtype = getattr(message, "subtype", None)
    if subtype is not None:
        record["subtype"] = str(subtype)
    record["message"] = message_to_dict(message)
    return record


def _message(event: MessageEvent, session_id: str) -> dict[str, Any]:
    return message_record(event.message, session_id)


def _stream_event(event: StreamDelta, session_id: str) -> dict[str, Any]:
    inner = event.event
    return {
        "type": "stream_event",
        "session_id": session_id,
        "event": {"type": PROVIDER_EVENT_TYPES[type(inner)], **jsonable(inner)},
    }


def _request_start(event: RequestStart, session_id: str) -> dict[str, Any]:
    return {"type": "request_start", "session_id": session_id, "turn": event.turn,
            "model": event.model}  # fmt: skip


def _transition(event: TransitionEvent, session_id: str) -> dict[str, Any]:
    return {"type": "transition", "session_id": session_id, "reason": event.reason.value,
            "turn": event.turn}  # fmt: skip


def _task(event: TaskEvent, session_id: str) -> dict[str, Any]:
    # task_started / task_progress / task_finished (TaskEventKind values)
    return {"type": event.kind.value, "session_id": session_id, "task_id": event.task_id,
            "task_type": event.task_type.value, "description": event.description,
            "status": event.status.value, "detail": event.detail,
            "tool_use_id": event.tool_use_id}  # fmt: skip


def _compaction(event: CompactionEvent, session_id: str) -> dict[str, Any]:
    """The new compact boundary, as a `system`/`compact_boundary` line with its figures."""
    boundary = next(
        (
            m
            for m in event.messages
            if isinstance(m, SystemMessage) and m.subtype is SystemSubtype.COMPACT_BOUNDARY
        ),
        None,
    )
    record: dict[str, Any] = {
        "type": "system",
        "subtype": SystemSubtype.COMPACT_BOUNDARY.value,
        "session_id": session_id,
        "compact_metadata": {
            "trigger": event.trigger.value,
            "pre_tokens": event.pre_tokens,
            "post_tokens": event.post_tokens,
        },
    }
    if boundary is not None:
        record["message"] = message_to_dict(boundary)
    return record


def _api_retry(event: ApiRetry, session_id: str) -> dict[str, Any]:
    """Claude Code's `system`/`api_retry` line: a failed request is sent again."""
    status = getattr(event.error, "status", None)
    return {"type": "system", "subtype": "api_retry", "session_id": session_id,
            "attempt": event.attempt, "max_retries": event.max_retries,
            "retry_delay_ms": round(event.delay_s * 1000),
            "error_status": status if isinstance(status, int) else None,
            "error": str(event.error), "model": event.model}  # fmt: skip


_Builder = Callable[[Any, str], dict[str, Any]]

_LOOP_RECORDS: Mapping[type, _Builder | None] = {
    MessageEvent: _message,
    MessageDraft: None,  # persisted before a tool starts; its MessageEvent follows
    StreamDelta: _stream_event,
    RequestStart: _request_start,
    ApiRetry: _api_retry,
    TransitionEvent: _transition,
    TaskEvent: _task,
    CompactionEvent: _compaction,
    TerminalEvent: None,  # the `result` line says how the run ended
    SideUsage: None,  # side requests are in the result's usage and cost
}


def event_record(event: object, session_id: str) -> dict[str, Any] | None:
    """The stream-JSON object for one loop event (None: not emitted)."""
    build = _LOOP_RECORDS.get(type(event))
    return None if build is None else build(event, session_id)


def result_record(result: RunResult[Any], *, interrupted: bool = False) -> dict[str, Any]:
    """The final `result` object (json output, and the last stream-json line)."""
    return {
        "type": "result",
        "subtype": _subtype(result),
        "terminal_reason": result.terminal.value,
        "is_error": result.is_error,
        "result": result.text,
        "detail": result.detail,
        "session_id": result.session_id,
        "num_turns": result.turns,
        "num_requests": result.requests,
        "usage": result.usage.to_dict(),
        "total_cost_usd": round(result.cost_usd, 6),
        "duration_ms": int(result.duration_s * 1000),
        "permission_denials": jsonable(result.denials),
        "deferred_tool_uses": jsonable(result.deferred),
        "exit_code": int(exit_code_for(result.terminal, interrupted=interrupted)),
        **_structured(result),
    }


def _subtype(result: RunResult[Any]) -> str:
    """success, error, or deferred (a tool call awaits a decision: `deferred_tool_uses`)."""
    if result.deferred and not result.is_error:
        return "deferred"
    return "error" if result.is_error else "success"


def _structured(result: RunResult[Any]) -> dict[str, Any]:
    """Claude Code's `structured_output` (`--json-schema`): the validated value, when the
    run returned one."""
    return {} if result.output is None else {"structured_output": jsonable(result.output)}


def init_record(agent: Agent[Any]) -> dict[str, Any]:
    """The first stream-json line: session id, model, cwd, tool names, permission mode."""
    from .. import __version__

    return {
        "type": "system",
        "subtype": "init",
        "session_id": agent.session_id,
        "model": agent.model,
        "cwd": str(agent.options.workspace.cwd),
        "tools": agent.tool_names,
        "permission_mode": agent.permission_mode,
        "queryloop_version": __version__,
    }
