"""Deferred tool calls: what the message array records about a call that waits for a decision.

A PreToolUse hook that answers `defer`, or a `can_use_tool` callback that returns a deferral,
leaves its tool_use without a tool_result: the run ends (terminal `deferred`) and a later
process decides. What happened to such a call is recorded in the array itself, as
`deferred_tool_use` system messages (never sent to the API), so the live session and a
transcript read back hold the same facts and every reader derives the state with one pure
function, `pending_calls`. Each record has an `event`:

- `deferred`: the call was put off; it names the tool, its input (and a SHA-256 of it) and
  who deferred it (a hook, by its label, or the callback);
- `decided`: a decision was given for it (allow, or deny with a message), written before it
  is acted on, so a process killed after it still knows the answer;
- `started`: the approved call is about to run (written, and durable, before it starts).

The call's tool_result is the last word: once there is one, the call is no longer pending. A
call that `started` and has no result was killed while it ran: it is not pending either (it
must never run twice); the transcript loader answers it as interrupted, as it does for any
call a kill cut short (`session.repair`).

`verify` compares each pending record with the tool_use it names: a record edited by hand
(another tool, another input, an id with no tool_use) is refused with the difference named.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Literal

from ..errors import ConfigError
from .blocks import ToolResultBlock, ToolUseBlock
from .constructors import result_ids, system_message
from .types import AssistantMessage, Message, SystemMessage, SystemSubtype, UserMessage


class DeferralEvent(StrEnum):
    """What a `deferred_tool_use` record says happened to the call."""

    DEFERRED = "deferred"
    DECIDED = "decided"
    STARTED = "started"


DeferredByKind = Literal["hook", "can_use_tool"]


@dataclass(frozen=True, slots=True)
class DeferredBy:
    """Who put a call off: a PreToolUse hook (`name`: its label, the command or the
    callable's name) or the `can_use_tool` callback."""

    kind: DeferredByKind
    name: str = ""
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A tool call that waits for a decision (`RunResult.deferred`)."""

    tool_use_id: str
    tool_name: str
    tool_input: Mapping[str, Any]
    deferred_by: DeferredBy
    input_sha256: str = ""
    decision: Literal["allow", "deny"] | None = None
    """A decision already recorded for it (by a process that died before acting on it)."""
    decision_message: str = ""
    started: bool = False
    """The approved call began to run (its result, if any, tells whether it finished)."""
    updated_input: Mapping[str, Any] | None = None
    """An approval's replacement input, when it gave one."""


class DeferralMismatchError(ConfigError):
    """A `deferred_tool_use` record does not match the tool_use it names (edited by hand?):
    refused before anything runs (the command line exits 2)."""


def input_digest(tool_input: Mapping[str, Any]) -> str:
    """The SHA-256 of an input's canonical JSON (sorted keys, no blanks)."""
    canonical = json.dumps(tool_input, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def deferred_message(block: ToolUseBlock, by: DeferredBy) -> SystemMessage:
    """The record of `block` being put off by `by`."""
    who = f"a PreToolUse hook ({by.name})" if by.kind == "hook" else "can_use_tool"
    return system_message(
        SystemSubtype.DEFERRED_TOOL_USE,
        f"The {block.name} call {block.id} was deferred by {who}; it awaits a decision.",
        metadata={
            "event": DeferralEvent.DEFERRED.value,
            "tool_use_id": block.id,
            "tool_name": block.name,
            "tool_input": dict(block.input),
            "input_sha256": input_digest(block.input),
            "deferred_by": {"kind": by.kind, "name": by.name, "reason": by.reason},
        },
    )


def decided_message(
    tool_use_id: str,
    behavior: Literal["allow", "deny"],
    message: str = "",
    updated_input: Mapping[str, Any] | None = None,
) -> SystemMessage:
    """The record of a decision on a deferred call, written before it is acted on."""
    metadata: dict[str, Any] = {
        "event": DeferralEvent.DECIDED.value,
        "tool_use_id": tool_use_id,
        "behavior": behavior,
        "message": message,
    }
    if updated_input is not None:
        metadata["updated_input"] = dict(updated_input)
    return system_message(
        SystemSubtype.DEFERRED_TOOL_USE,
        f"Deferred call {tool_use_id}: {behavior}.",
        metadata=metadata,
    )


def started_message(tool_use_id: str) -> SystemMessage:
    """The marker written (and durable) right before an approved deferred call runs."""
    return system_message(
        SystemSubtype.DEFERRED_TOOL_USE,
        f"Deferred call {tool_use_id} started.",
        metadata={"event": DeferralEvent.STARTED.value, "tool_use_id": tool_use_id},
    )


def deferral_records(messages: Iterable[Message]) -> Iterable[Mapping[str, Any]]:
    """The metadata of every `deferred_tool_use` record, in order."""
    for message in messages:
        if (
            isinstance(message, SystemMessage)
            and message.subtype is SystemSubtype.DEFERRED_TOOL_USE
        ):
            yield message.metadata


def pending_calls(messages: Sequence[Message]) -> tuple[PendingCall, ...]:
    """The calls still waiting for a decision, in the order they were deferred: deferred,
    not answered by a tool_result, and not started (a started call with no result was
    killed while it ran; it is answered as interrupted, never run again)."""
    calls: dict[str, PendingCall] = {}
    for data in deferral_records(messages):
        ident = str(data.get("tool_use_id", ""))
        event = data.get("event")
        if event == DeferralEvent.DEFERRED:
            calls.pop(ident, None)  # deferred again: the latest record is the one that counts
            calls[ident] = _pending(ident, data)
        elif ident in calls and event == DeferralEvent.DECIDED:
            calls[ident] = _with_decision(calls[ident], data)
        elif ident in calls and event == DeferralEvent.STARTED:
            calls[ident] = replace(calls[ident], started=True)
    answered = result_ids(messages)
    return tuple(c for c in calls.values() if c.tool_use_id not in answered and not c.started)


def can_continue(messages: Sequence[Message]) -> bool:
    """True when the model has yet to answer: a call waits for a decision, or the last
    message the model would read holds tool results (a run stopped between a tool's result
    and the next request)."""
    if pending_calls(messages):
        return True
    last = next(
        (m for m in reversed(messages) if isinstance(m, UserMessage | AssistantMessage)), None
    )
    return (
        isinstance(last, UserMessage)
        and not isinstance(last.content, str)
        and any(isinstance(b, ToolResultBlock) for b in last.content)
    )


def verify(pending: Iterable[PendingCall], messages: Sequence[Message]) -> None:
    """Raise `DeferralMismatchError` unless each pending record matches its tool_use: the
    same id, tool name and input, and the input's recorded digest."""
    uses = {b.id: b for m in messages if isinstance(m, AssistantMessage) for b in _uses(m)}
    for call in pending:
        block = uses.get(call.tool_use_id)
        if block is None:
            raise DeferralMismatchError(
                f"the deferred call {call.tool_use_id!r} names no tool_use of the conversation: "
                "the record was edited or belongs to another session; refusing to run it"
            )
        problems = []
        if block.name != call.tool_name:
            problems.append(f"tool {call.tool_name!r} but the tool_use calls {block.name!r}")
        if dict(block.input) != dict(call.tool_input):
            problems.append("an input that differs from the tool_use's input")
        if call.input_sha256 and input_digest(block.input) != call.input_sha256:
            problems.append("an input digest that does not match the tool_use's input")
        if problems:
            raise DeferralMismatchError(
                f"the record of deferred call {call.tool_use_id!r} does not match its tool_use: "
                f"it has {'; '.join(problems)}. Refusing to run it (was it edited by hand?)"
            )


def _uses(message: AssistantMessage) -> Iterable[ToolUseBlock]:
    return (b for b in message.content if isinstance(b, ToolUseBlock))


def _pending(ident: str, data: Mapping[str, Any]) -> PendingCall:
    by = data.get("deferred_by")
    by = by if isinstance(by, Mapping) else {}
    kind: DeferredByKind = "can_use_tool" if by.get("kind") == "can_use_tool" else "hook"
    tool_input = data.get("tool_input")
    return PendingCall(
        tool_use_id=ident,
        tool_name=str(data.get("tool_name", "")),
        tool_input=dict(tool_input) if isinstance(tool_input, Mapping) else {},
        deferred_by=DeferredBy(kind, str(by.get("name", "")), str(by.get("reason", ""))),
        input_sha256=str(data.get("input_sha256", "")),
    )


def _with_decision(call: PendingCall, data: Mapping[str, Any]) -> PendingCall:
    behavior = data.get("behavior")
    if behavior not in ("allow", "deny"):
        return call
    updated = data.get("updated_input")
    return replace(
        call,
        decision="allow" if behavior == "allow" else "deny",
        decision_message=str(data.get("message", "")),
        updated_input=dict(updated) if isinstance(updated, Mapping) else None,
    )
