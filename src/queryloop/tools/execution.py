"""Running ONE tool call: lookup, input parsing, hooks, permissions, the call, the result.

`run_tool_call` is an async generator of messages: `ProgressMessage`s while the tool runs,
then exactly one `UserMessage` holding the call's tool_result, then any extra messages (the
tool's `new_messages`, a PostToolUse hook's context as an attachment, or, for a call that was
refused, a `permission_denied` system message recording who refused it). Every failure
becomes an is_error tool_result the model can act on; only `asyncio.CancelledError`
propagates.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from ..messages.blocks import TextBlock, ToolUseBlock
from ..messages.constructors import (
    attachment_message,
    meta_user_message,
    permission_denied_message,
    tool_result_message,
)
from ..messages.deferral import DeferredBy, deferred_message, started_message
from ..messages.types import Message, ProgressMessage
from .base import (
    CURRENT_TOOL_USE_ID,
    DenialSource,
    PermissionChecker,
    PermissionDecision,
    PreToolUseOutcome,
    Tool,
    ToolContext,
    ToolError,
    ToolEventHooks,
    ToolHooks,
    ToolProgress,
    ToolResult,
)
from .output import ResultContent, format_validation_error, truncate_content

HARD_CAP_FACTOR = 20
"""A result is cut (head and tail kept) only above this many times the tool's maximum."""


@dataclass
class CallOutcome:
    """What the caller may want to know about a finished call besides its messages.

    A mutable collector: `run_tool_call` fills it in as the call goes.
    """

    is_error: bool = False
    stop_reason: str | None = None
    """Set when a hook asked to stop the whole loop after this round of tools."""
    tool: Tool | None = None
    context: list[Message] = field(default_factory=list)
    """PreToolUse hooks' context for the model, added after the result."""
    permission: DenialSource | None = None
    """Who allowed the call (a rule, the mode, a hook, the user, the tool), once allowed."""
    deferred: bool = False
    """The call was put off for a later decision: it yielded no tool_result."""


class _Rejected(Exception):
    """Internal: the call ends early with this is_error text (never leaves this module)."""


class _Deferred(Exception):
    """Internal: the call is put off for a decision in a later process (never leaves here)."""

    def __init__(self, by: DeferredBy) -> None:
        super().__init__(by.reason)
        self.by = by


class _Denied(_Rejected):
    """Internal: a permission refusal (a rule, the mode, a hook, the user, nobody to ask)."""

    def __init__(self, text: str, source: DenialSource, rule: str | None = None) -> None:
        super().__init__(text)
        self.source = source
        self.rule = rule


def find_tool(tools: Sequence[Tool], name: str) -> Tool | None:
    """The tool called `name`, or None. A tool's `aliases` (older names models were trained
    on, such as `Task` for `Agent`) find it too."""
    found = next((t for t in tools if t.name == name), None)
    if found is None:
        found = next((t for t in tools if name in getattr(t, "aliases", ())), None)
    return found


def parse_input(tool: Tool, raw: Mapping[str, Any]) -> BaseModel:
    """The validated input model; raises `_Rejected` with an actionable message."""
    try:
        return tool.input_model.model_validate(dict(raw))
    except ValidationError as exc:
        raise _Rejected(format_validation_error(tool.name, exc)) from exc


def input_dict(parsed: BaseModel) -> dict[str, Any]:
    """The wire form of a parsed input (aliases such as `-i`), as hooks and rules see it."""
    return parsed.model_dump(mode="json", by_alias=True, exclude_none=True)


async def run_tool_call(
    block: ToolUseBlock,
    tools: Sequence[Tool],
    ctx: ToolContext,
    *,
    permission: PermissionChecker | None = None,
    hooks: ToolHooks | None = None,
    outcome: CallOutcome | None = None,
    approved: bool = False,
) -> AsyncIterator[Message]:
    """Run one tool_use block and yield its progress, its tool_result message and extras.

    `approved`: a person approved this deferred call (`loop.deferred`): the PreToolUse hooks
    that deferred it are not asked again, their `allow` stands instead (so deny rules still
    refuse it), and a `started` record is yielded right before the tool runs; the consumer
    makes it durable before it asks for the next message, so a kill never runs it twice."""
    out = outcome if outcome is not None else CallOutcome()
    # Each call runs in its own task, so this is the call's own id for its hooks, its
    # permission request and its tool (`ToolContext` is shared by concurrent calls).
    CURRENT_TOOL_USE_ID.set(block.id)
    tool = find_tool(tools, block.name)
    out.tool = tool
    extras: list[Message] = []
    try:
        if tool is None:
            raise _Rejected(_unknown_tool_text(block.name, tools))
        parsed = await _prepare(tool, block, ctx, permission, hooks, out, approved=approved)
        if approved:
            yield started_message(block.id)
        started, cwd = time.monotonic(), ctx.cwd
        try:
            result = None
            async for item in _call(tool, block, parsed, ctx):
                if isinstance(item, ToolResult):
                    result = item
                else:
                    yield item
        except ToolError as exc:  # the tool started and failed: PostToolUseFailure
            result = ToolResult(content=str(exc), is_error=True)
        except Exception as exc:  # a tool must never crash the loop
            result = ToolResult(content=f"Error: {type(exc).__name__}: {exc}", is_error=True)
        assert result is not None
        duration = int((time.monotonic() - started) * 1000)
        try:
            result, extras = await _post_hooks(
                tool, block, parsed, result, ctx, hooks, out, duration
            )
            await _cwd_hooks(hooks, cwd, ctx.cwd)
        except Exception as exc:  # the tool ran: keep its result, whatever the hook did
            note = f"(PostToolUse hook failed: {type(exc).__name__}: {exc})"
            result = replace(result, content=_append_text(result.content, note))
    except asyncio.CancelledError:
        raise
    except _Deferred as exc:
        out.deferred = True
        yield deferred_message(block, exc.by)
        return
    except _Denied as exc:
        result = ToolResult(content=str(exc), is_error=True)
        extras = [_denial_message(block, exc), *await _denied_hooks(hooks, block, exc)]
    except (_Rejected, ToolError) as exc:
        result = ToolResult(content=str(exc), is_error=True)
    except Exception as exc:  # a tool must never crash the loop
        result = ToolResult(content=f"Error: {type(exc).__name__}: {exc}", is_error=True)
    out.is_error = result.is_error
    yield _result_message(block, tool, result)
    for message in (*result.new_messages, *out.context, *extras):
        yield message


async def _call(
    tool: Tool, block: ToolUseBlock, parsed: BaseModel, ctx: ToolContext
) -> AsyncIterator[Message | ToolResult]:
    """The tool's progress as messages, then its result (ToolError propagates)."""
    result: ToolResult | None = None
    stream = tool.call(parsed, ctx)
    try:
        async for item in stream:
            if isinstance(item, ToolProgress):
                yield _progress_message(block.id, item)
            elif isinstance(item, ToolResult):
                result = item
    finally:
        await _aclose(stream)
    if result is None:
        raise ToolError(f"{tool.name} finished without producing a result")
    yield result


async def _aclose(stream: AsyncIterator[Any]) -> None:
    """Close a tool's generator now (its cleanup runs here, not at garbage collection)."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()


async def _prepare(
    tool: Tool,
    block: ToolUseBlock,
    ctx: ToolContext,
    permission: PermissionChecker | None,
    hooks: ToolHooks | None,
    out: CallOutcome,
    *,
    approved: bool = False,
) -> BaseModel:
    """Parse, validate, run PreToolUse hooks and check permissions; the input to call with."""
    parsed = parse_input(tool, block.input)
    await _validate(tool, parsed, ctx)
    pre: PreToolUseOutcome | None = None
    if approved:
        pre = PreToolUseOutcome("allow", "approved after it was deferred")
    elif hooks is not None:
        pre = await hooks.pre_tool_use(tool.name, input_dict(parsed), block.id, ctx)
        if pre.stop_reason:
            out.stop_reason = pre.stop_reason
        if pre.additional_context:
            out.context.append(attachment_message("text", content=pre.additional_context))
        if pre.decision == "deny":
            reason = pre.reason or "no reason given"
            raise _Denied(
                f"PreToolUse hook denied this {tool.name} call: {reason}", DenialSource.HOOK
            )
        if pre.decision == "defer":
            raise _Deferred(DeferredBy("hook", pre.decided_by, pre.reason))
        if pre.updated_input is not None:
            parsed = parse_input(tool, pre.updated_input)
            await _validate(tool, parsed, ctx)
    return await _check_permissions(tool, parsed, ctx, permission, pre, out)


async def _validate(tool: Tool, parsed: BaseModel, ctx: ToolContext) -> None:
    problem = await tool.validate_input(parsed, ctx)
    if problem:
        raise _Rejected(problem)


async def _check_permissions(
    tool: Tool,
    parsed: BaseModel,
    ctx: ToolContext,
    permission: PermissionChecker | None,
    pre: PreToolUseOutcome | None,
    out: CallOutcome,
) -> BaseModel:
    """The tool's own verdict first (deny wins), then the session's checker, if any, told
    what the PreToolUse hooks decided; `out.permission` says who allowed the call.

    Without a checker everything the tool does not deny is allowed. The checker's `allow`
    and `passthrough` allow; `deny` and an unresolved `ask` refuse.
    """
    own = await tool.check_permissions(parsed, ctx)
    parsed = _apply_decision(tool, parsed, own)
    if permission is None:
        out.permission = own.source or DenialSource.TOOL
        return parsed
    verdict = await permission.check(tool, input_dict(parsed), ctx, hook=pre)
    parsed = _apply_decision(tool, parsed, verdict, final=True)
    out.permission = verdict.source
    return parsed


def _apply_decision(
    tool: Tool, parsed: BaseModel, decision: PermissionDecision, *, final: bool = False
) -> BaseModel:
    if decision.behavior == "defer":
        raise _Deferred(DeferredBy("can_use_tool", "can_use_tool", decision.message))
    refused = decision.behavior == "deny" or (final and decision.behavior == "ask")
    if refused:
        why = decision.message or (
            "approval was required and nobody could approve it"
            if decision.behavior == "ask"
            else "no reason given"
        )
        source = decision.source or (
            DenialSource.NO_APPROVER if decision.behavior == "ask" else DenialSource.TOOL
        )
        raise _Denied(f"Permission to use {tool.name} was denied: {why}", source, decision.rule)
    if decision.behavior == "allow" and decision.updated_input is not None:
        return parse_input(tool, decision.updated_input)
    return parsed


async def _post_hooks(
    tool: Tool,
    block: ToolUseBlock,
    parsed: BaseModel,
    result: ToolResult,
    ctx: ToolContext,
    hooks: ToolHooks | None,
    out: CallOutcome,
    duration_ms: int,
) -> tuple[ToolResult, list[Message]]:
    """PostToolUse after a success, PostToolUseFailure after an error result: context as an
    attachment, a block (exit 2's stderr) beside the result, a stop request."""
    if hooks is None:
        return result, []
    args = (tool.name, input_dict(parsed))
    if not result.is_error:
        post = await hooks.post_tool_use(*args, result, block.id, ctx)
    elif (events := event_hooks(hooks)) is not None and not result.interrupted:
        # a cancelled call does not fire it (Claude Code's rule); its result says so
        error = _result_text(result)
        post = await events.post_tool_use_failure(
            *args, error, block.id, ctx, duration_ms=duration_ms
        )
    else:
        return result, []
    if post.stop_reason:
        out.stop_reason = post.stop_reason
    extras: list[Message] = []
    if post.additional_context:
        extras.append(attachment_message("text", content=post.additional_context))
    if post.block_reason:
        event = "PostToolUseFailure" if result.is_error else "PostToolUse"
        note = f"{event} hook blocked this result: {post.block_reason}"
        result = replace(result, content=_append_text(result.content, note), is_error=True)
    return result, extras


async def _cwd_hooks(hooks: ToolHooks | None, old: Path, new: Path) -> None:
    """CwdChanged when the call moved the working directory (a `cd` in Bash)."""
    events = event_hooks(hooks)
    if old != new and events is not None:
        await events.cwd_changed(old, new)


async def _denied_hooks(
    hooks: ToolHooks | None, block: ToolUseBlock, denied: _Denied
) -> list[Message]:
    """PermissionDenied after a refusal nobody was asked about (the headless analogue of
    Claude Code's auto-mode denial); `retry` tells the model it may try again."""
    events = event_hooks(hooks)
    if denied.source is not DenialSource.NO_APPROVER or events is None:
        return []
    try:
        retry = await events.permission_denied(block.name, block.input, block.id, str(denied))
    except Exception:  # a broken hook must not change the denial
        return []
    if not retry:
        return []
    return [
        meta_user_message(f"A PermissionDenied hook says the {block.name} call may be retried.")
    ]


def event_hooks(hooks: ToolHooks | None) -> ToolEventHooks | None:
    """`hooks` when it has the further hook points; a wrapper (checkpoints) passes them
    through by `__getattr__`, which a runtime protocol check would not see on Python 3.12."""
    if hooks is None or not callable(getattr(hooks, "post_tool_use_failure", None)):
        return None
    return cast(ToolEventHooks, hooks)


def _result_text(result: ToolResult) -> str:
    if isinstance(result.content, str):
        return result.content
    return "\n".join(b.text for b in result.content if isinstance(b, TextBlock))


def _append_text(content: ResultContent, note: str) -> ResultContent:
    if isinstance(content, str):
        return f"{content}\n\n{note}" if content else note
    return (*content, TextBlock(text=note))


def _result_message(block: ToolUseBlock, tool: Tool | None, result: ToolResult) -> Message:
    content = result.content
    if (isinstance(content, str) and not content.strip()) or content == ():
        content = f"({block.name} completed with no output)"
    if tool is not None:
        # Only a memory guard here: the compaction budget (queryloop.compact.budget) spills
        # results above `max_result_chars` to a file with a preview before the model sees
        # them, so the full output stays readable instead of being cut.
        content = truncate_content(content, tool.max_result_chars * HARD_CAP_FACTOR)
    return tool_result_message(
        block.id, content, is_error=result.is_error, interrupted=result.interrupted
    )


def _denial_message(block: ToolUseBlock, denied: _Denied) -> Message:
    return permission_denied_message(
        tool_name=block.name,
        tool_use_id=block.id,
        tool_input=block.input,
        message=str(denied),
        source=denied.source.value,
        rule=denied.rule,
    )


def _progress_message(tool_use_id: str, progress: ToolProgress) -> ProgressMessage:
    # A nested call (a sub-agent's tool) may name its own tool_use id; the parent stays ours.
    inner = progress.data.get("tool_use_id")
    return ProgressMessage(
        tool_use_id=inner if isinstance(inner, str) else tool_use_id,
        parent_tool_use_id=tool_use_id,
        data=progress.data,
    )


def _unknown_tool_text(name: str, tools: Sequence[Tool]) -> str:
    available = ", ".join(sorted(t.name for t in tools)) or "none"
    return f"Error: No such tool available: {name}. Available tools: {available}"


def error_result_message(tool_use_id: str, text: str) -> Message:
    """An is_error tool_result message for a call that never ran or never finished."""
    return tool_result_message(tool_use_id, text, is_error=True)
