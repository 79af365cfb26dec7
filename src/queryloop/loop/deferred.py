"""Resolve the tool calls a run deferred, before anything else is sent to the model.

A run ends with terminal `deferred` when a PreToolUse hook answered `defer` or `can_use_tool`
returned a deferral (`messages.deferral`): the call's tool_use stays unanswered and no request
is sent. The next run of the session, in this process or another, first resolves every
pending call, in the order they were deferred, through `resolve_deferred`:

- the decisions given now (`Agent.resume(..., decisions=...)`, `run(decisions=...)`) are
  recorded (`decided`) before any call is acted on, so a kill after them keeps the answers;
- allow: the call runs exactly once. Its input is validated again, the PreToolUse hooks are
  not asked again (the approval answers them, standing where a hook's `allow` stands: deny
  rules, ask rules, protected paths and fail-closed doubts still hold), and a `started`
  record is made durable before the tool starts. A process killed while the tool ran leaves
  `started` without a result: the call is answered as interrupted (the loader's stand-in,
  then resume's "may or may not have taken effect"), never run again;
- deny: the model reads an is_error tool_result with the message (a `permission_denied`
  record beside it, so `RunResult.denials` lists it);
- no decision (none given, none recorded): the call goes through the normal path again,
  hooks and permission check included, as Claude Code asks the hook again on `--resume`;
  it may run, be refused, or be deferred again.

If a call is deferred again the run ends at once with terminal `deferred` (no request, the
prompt, if any, is not sent). Otherwise every tool_use is answered and the loop goes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from typing import TypeAlias

from ..errors import ConfigError
from ..messages.blocks import ToolUseBlock
from ..messages.constructors import permission_denied_message, tool_result_message
from ..messages.deferral import PendingCall, decided_message, pending_calls, verify
from ..messages.types import AssistantMessage, Message
from ..permissions.checker import PermissionAllow, PermissionDeny
from ..tools.base import DenialSource
from ..tools.execution import run_tool_call
from .deps import QueryParams
from .events import LoopEvent, MessageEvent, TerminalEvent
from .reasons import Terminal

Decision: TypeAlias = PermissionAllow | PermissionDeny
"""A decision on a deferred call: `PermissionAllow()` runs it (`updated_input` replaces its
input), `PermissionDeny(message)` refuses it with `message` for the model."""


class UnknownDeferralError(ConfigError):
    """A decision names a tool_use id that no deferred call of the session has."""


def check_decisions(messages: Sequence[Message], decisions: Mapping[str, Decision]) -> None:
    """Raise unless every pending record matches its tool_use (`DeferralMismatchError`) and
    every decision names a pending call (`UnknownDeferralError`)."""
    pending = pending_calls(messages)
    verify(pending, messages)
    ids = {c.tool_use_id for c in pending}
    unknown = sorted(set(decisions) - ids)
    if unknown:
        waiting = ", ".join(sorted(ids)) or "none"
        raise UnknownDeferralError(
            f"no deferred tool call {', '.join(unknown)} waits in this session (pending: {waiting})"
        )
    for ident, decision in decisions.items():
        if not isinstance(decision, PermissionAllow | PermissionDeny):
            raise TypeError(
                f"the decision for {ident} is a {type(decision).__name__}; give "
                "PermissionAllow() or PermissionDeny(message)"
            )


def deferred_detail(calls: Sequence[PendingCall]) -> str:
    """The terminal's words: which calls wait, and how to decide them."""
    listed = ", ".join(f"{c.tool_name} {c.tool_use_id}" for c in calls)
    return (
        f"{len(calls)} tool call(s) await a decision: {listed}. Continue with "
        "Agent.resume(session_id, decisions={id: PermissionAllow() | PermissionDeny(msg)}) "
        "or queryloop -p --resume ID --approve ID / --deny ID."
    )


async def resolve_deferred(
    params: QueryParams, messages: Sequence[Message], decisions: Mapping[str, Decision]
) -> AsyncIterator[LoopEvent]:
    """Resolve the session's pending calls (see the module docstring). Yields a
    `MessageEvent` for every record and result, each to be applied (made durable) before the
    next is asked for; ends with a `TerminalEvent` (`deferred`) only when a call was deferred
    again. Raises before acting when a record or a decision does not fit."""
    check_decisions(messages, decisions)
    array = list(messages)
    for decided in _recorded(pending_calls(array), decisions):
        array.append(decided)
        yield MessageEvent(decided)  # every decision durable before any call is acted on
    uses = {b.id: b for m in array if isinstance(m, AssistantMessage) for b in _uses(m)}
    again: list[PendingCall] = []
    for call in pending_calls(array):
        async for message in _act(params, call, uses[call.tool_use_id]):
            array.append(message)
            yield MessageEvent(message)
        if call.tool_use_id in {c.tool_use_id for c in pending_calls(array)}:
            again.append(call)
    if again:
        detail = deferred_detail(again)
        yield TerminalEvent(Terminal.DEFERRED, turn=0, detail=detail, messages=tuple(array))


def _recorded(pending: Sequence[PendingCall], decisions: Mapping[str, Decision]) -> list[Message]:
    """The `decided` record of each decision given now, in the order the calls wait."""
    records: list[Message] = []
    for call in pending:
        given = decisions.get(call.tool_use_id)
        if isinstance(given, PermissionAllow):
            records.append(decided_message(call.tool_use_id, "allow", "", given.updated_input))
        elif isinstance(given, PermissionDeny):
            records.append(decided_message(call.tool_use_id, "deny", given.message))
    return records


async def _act(
    params: QueryParams, call: PendingCall, block: ToolUseBlock
) -> AsyncIterator[Message]:
    """Deny, run as approved, or (no decision) run through the normal path again."""
    if call.decision == "deny":
        for denial in _denied(block, call.decision_message):
            yield denial
        return
    if call.updated_input is not None:
        block = replace(block, input=dict(call.updated_input))
    async for result in run_tool_call(
        block,
        params.tools,
        params.tool_context,
        permission=params.permission,
        hooks=params.tool_hooks,
        approved=call.decision == "allow",
    ):
        yield result


def _denied(block: ToolUseBlock, message: str) -> tuple[Message, Message]:
    text = f"The user denied this {block.name} call. {message}".strip()
    return (
        tool_result_message(block.id, text, is_error=True),
        permission_denied_message(
            tool_name=block.name,
            tool_use_id=block.id,
            tool_input=block.input,
            message=text,
            source=DenialSource.USER.value,
        ),
    )


def _uses(message: AssistantMessage) -> Sequence[ToolUseBlock]:
    return [b for b in message.content if isinstance(b, ToolUseBlock)]
