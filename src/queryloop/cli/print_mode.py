"""Print mode (`queryloop -p`): one prompt, headless, output as text, JSON or stream-JSON.

The stream-JSON schema (one object per line) is documented in docs/cli.md; `event_record`
is its single source.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import signal
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TextIO

from ..loop.events import (
    LoopEvent,
    MessageEvent,
    RequestStart,
    StreamDelta,
    TerminalEvent,
    TransitionEvent,
)
from ..loop.reasons import Terminal
from ..messages.blocks import block_to_api
from ..messages.constructors import text_of
from ..messages.serialization import message_to_dict
from ..messages.types import AssistantMessage, Message, UserMessage
from ..messages.usage import Usage
from ..tasks.events import TaskEvent
from .exit_codes import ExitCode, exit_code_for

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def final_text(messages: tuple[Message, ...] | list[Message]) -> str:
    """The text of the last assistant message answering the last prompt."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return text_of(message)
        if isinstance(message, UserMessage) and not message.is_meta:
            break
    return ""


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


_BLOCK_TYPES = frozenset(
    {"text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image", "document"}
)


def event_record(event: LoopEvent, session_id: str) -> dict[str, Any] | None:
    """The stream-JSON object for one loop event (None: not emitted; terminal is `result`)."""
    if isinstance(event, MessageEvent):
        return message_record(event.message, session_id)
    if isinstance(event, StreamDelta):
        inner = event.event
        kind = _CAMEL.sub("_", type(inner).__name__).lower()
        return {
            "type": "stream_event",
            "session_id": session_id,
            "event": {"type": kind, **jsonable(inner)},
        }
    if isinstance(event, RequestStart):
        return {"type": "request_start", "session_id": session_id, "turn": event.turn,
                "model": event.model}  # fmt: skip
    if isinstance(event, TransitionEvent):
        return {"type": "transition", "session_id": session_id, "reason": event.reason.value,
                "turn": event.turn}  # fmt: skip
    if isinstance(event, TaskEvent):  # task_started / task_progress / task_finished
        return {"type": event.kind.value, "session_id": session_id, "task_id": event.task_id,
                "task_type": event.task_type.value, "description": event.description,
                "status": event.status.value, "detail": event.detail,
                "tool_use_id": event.tool_use_id}  # fmt: skip
    return None


def message_record(message: Message, session_id: str) -> dict[str, Any]:
    """`{"type": <message type>, "session_id", "message": message_to_dict(...)}`; system
    messages also carry their `subtype`."""
    record: dict[str, Any] = {"type": message.type, "session_id": session_id}
    subtype = getattr(message, "subtype", None)
    if subtype is not None:
        record["subtype"] = str(subtype)
    record["message"] = message_to_dict(message)
    return record


@dataclass
class RunOutcome:
    """What one print-mode run produced (the `result` object's source)."""

    terminal: Terminal = Terminal.MODEL_ERROR
    detail: str = ""
    text: str = ""
    session_id: str = ""
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    duration_s: float = 0.0
    interrupted: bool = False

    @property
    def exit_code(self) -> ExitCode:
        """The process exit status for this outcome."""
        return exit_code_for(self.terminal, interrupted=self.interrupted)

    def result_record(self) -> dict[str, Any]:
        """The final `result` object (json output, and the last stream-json line)."""
        is_error = self.terminal is not Terminal.COMPLETED
        return {
            "type": "result",
            "subtype": "error" if is_error else "success",
            "terminal_reason": self.terminal.value,
            "is_error": is_error,
            "result": self.text,
            "detail": self.detail,
            "session_id": self.session_id,
            "num_turns": self.turns,
            "usage": self.usage.to_dict(),
            "total_cost_usd": round(self.cost_usd, 6),
            "duration_ms": int(self.duration_s * 1000),
            "exit_code": int(self.exit_code),
        }


class LineWriter:
    """Writes one JSON object per line and flushes, so a pipe reader sees it at once."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, record: Mapping[str, Any]) -> None:
        self.out.write(json.dumps(record, ensure_ascii=False) + "\n")
        self.out.flush()


async def run_print(
    agent: Any,
    prompt: str,
    *,
    output_format: str,
    include_partial: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> RunOutcome:
    """Run `prompt` on `agent` and write the output; returns the outcome (for the exit code)."""
    out = out or sys.stdout
    err = err or sys.stderr
    emit = LineWriter(out) if output_format == "stream-json" else None
    outcome = RunOutcome()
    started = time.monotonic()
    usage_before, cost_before, turns_before = agent.usage, agent.cost_usd, agent.turns
    await agent.start()
    outcome.session_id = agent.session_id
    if emit is not None:
        emit(init_record(agent))
    with _sigint_aborts(agent, outcome):
        async for event in agent.stream(prompt):
            if isinstance(event, TerminalEvent):
                outcome.terminal, outcome.detail = event.reason, event.detail
                outcome.text = final_text(event.messages or tuple(agent.messages))
            elif emit is not None:
                if isinstance(event, StreamDelta) and not include_partial:
                    continue
                record = event_record(event, agent.session_id)
                if record is not None:
                    emit(record)
    outcome.session_id = agent.session_id
    outcome.turns = agent.turns - turns_before
    outcome.usage = _usage_minus(agent.usage, usage_before)
    outcome.cost_usd = agent.cost_usd - cost_before
    outcome.duration_s = time.monotonic() - started
    _write_result(outcome, output_format, out, err, emit)
    return outcome


def init_record(agent: Any) -> dict[str, Any]:
    """The first stream-json line: session id, model, cwd, tool names."""
    from .. import __version__

    return {
        "type": "system",
        "subtype": "init",
        "session_id": agent.session_id,
        "model": agent.model,
        "cwd": str(agent.options.cwd),
        "tools": tool_names(agent),
        "permission_mode": agent.options.permission_mode or "default",
        "queryloop_version": __version__,
    }


def tool_names(agent: Any) -> list[str]:
    """The names of the tools the model is offered (best effort across Agent versions)."""
    names = getattr(agent, "tool_names", None)
    if callable(names):
        names = names()
    if names is None:
        runtime = getattr(agent, "_runtime", None)
        params = getattr(runtime, "params", None)
        tools = getattr(params, "tools", None) or ()
        names = [getattr(t, "name", str(t)) for t in tools]
    return list(names)


def _write_result(
    outcome: RunOutcome,
    output_format: str,
    out: TextIO,
    err: TextIO,
    emit: Callable[[Mapping[str, Any]], None] | None,
) -> None:
    if emit is not None:
        emit(outcome.result_record())
        return
    if output_format == "json":
        out.write(json.dumps(outcome.result_record(), ensure_ascii=False, indent=2) + "\n")
        out.flush()
        return
    if outcome.text:
        out.write(outcome.text.rstrip("\n") + "\n")
        out.flush()
    if outcome.terminal is not Terminal.COMPLETED:
        detail = f": {outcome.detail}" if outcome.detail else ""
        err.write(f"queryloop: stopped ({outcome.terminal.value}){detail}\n")
        err.flush()


class _sigint_aborts:
    """While running: the first SIGINT aborts the turn (the loop then ends cleanly and
    the transcript stays consistent); a second exits at once with 130 (every message is
    already on disk)."""

    def __init__(self, agent: Any, outcome: RunOutcome) -> None:
        self.agent = agent
        self.outcome = outcome
        self.installed = False

    def _handle(self) -> None:
        if self.outcome.interrupted:
            import os

            sys.stderr.write("\nqueryloop: interrupted\n")
            os._exit(ExitCode.INTERRUPTED)
        self.outcome.interrupted = True
        sys.stderr.write("\nqueryloop: aborting (Ctrl-C again to quit now)\n")
        self.agent.abort()

    def __enter__(self) -> _sigint_aborts:
        try:
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._handle)
            self.installed = True
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # not the main thread, or no signal support: Ctrl-C raises as usual
        return self

    def __exit__(self, *exc: object) -> None:
        if self.installed:
            asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)


def _usage_minus(after: Usage, before: Usage) -> Usage:
    names = [f.name for f in dataclasses.fields(Usage)]
    return Usage(**{n: max(0, getattr(after, n) - getattr(before, n)) for n in names})
