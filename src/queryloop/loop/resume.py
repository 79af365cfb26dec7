"""Redo interrupted read-only work before the next request (after kill -9, resume, abort).

A session killed while its tools ran leaves tool_uses without results; loading it gives each a
synthetic "interrupted" result (`session.repair`). An in-process abort does the same. If the
model then only sees "interrupted", the work is lost: it moves on and the real result never
reaches a later request. So, before the next request, `resume_interrupted_calls`:

- finds the calls of the LAST model response whose result is missing or a stand-in flagged
  `interrupted` (`messages.interruption`; older responses were already answered and seen by
  the model);
- re-runs those whose tool is safe to repeat -- `rerun_on_resume` is true: the built-in Read,
  Glob, Grep and LS, MCP tools annotated `readOnlyHint` or `idempotentHint` -- through the
  normal execution path (input validation, permissions, hooks), and records their results;
- gives every other call that has NO recorded result (killed before it was written: the
  loader's `Interruption.RESUMED` stand-in, or nothing) a result saying it was interrupted
  before its result was recorded and may or may not have taken effect (`MAY_HAVE_RUN`, so
  the model checks before repeating a side effect; not flagged);
- leaves alone every other call whose stand-in was recorded in process (the user aborted
  it, its turn was cancelled, the tool stopped): that result is already the truth, and
  replacing it with "before its result was recorded" would tell the model something false.

The caller appends `ResumedCalls.appended` to its session: a tombstone voids each placeholder
and the real results follow, so the transcript reloads to the same array and a second resume
finds nothing to redo.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..messages.blocks import ToolResultBlock, ToolUseBlock
from ..messages.constructors import tool_result_message
from ..messages.interruption import MAY_HAVE_RUN, Interruption
from ..messages.types import (
    AssistantMessage,
    Message,
    ProgressMessage,
    TombstoneMessage,
    TombstoneReason,
    UserMessage,
    new_uuid,
)
from ..tools.base import PermissionChecker, Tool, ToolContext, ToolHooks
from ..tools.execution import find_tool, run_tool_call

__all__ = ["MAY_HAVE_RUN", "ResumedCalls", "can_rerun", "resume_interrupted_calls"]


def can_rerun(tool: Tool | None) -> bool:
    """True when `tool` declares a repeated call harmless (`rerun_on_resume`)."""
    return tool is not None and getattr(tool, "rerun_on_resume", False) is True


@dataclass(frozen=True, slots=True)
class ResumedCalls:
    """What `resume_interrupted_calls` did: the messages to append, and the array after."""

    messages: list[Message]
    """The array with `appended` applied."""
    appended: tuple[Message, ...] = ()
    """To append in order (a session writes each to the transcript): a tombstone voiding
    each placeholder message, what else that message held, then the new results."""
    rerun: tuple[str, ...] = ()
    """tool_use ids re-run with their real results."""
    marked: tuple[str, ...] = ()
    """tool_use ids given the "may or may not have taken effect" result."""

    @property
    def changed(self) -> bool:
        """True when anything was re-run or marked."""
        return bool(self.appended)


async def resume_interrupted_calls(
    messages: Sequence[Message],
    tools: Sequence[Tool],
    ctx: ToolContext,
    *,
    permission: PermissionChecker | None = None,
    hooks: ToolHooks | None = None,
) -> ResumedCalls:
    """Answer every interrupted call of the last response for real (see the module doc)."""
    array = list(messages)
    response = _last_response(array)
    if not response:
        return ResumedCalls(array)
    uses = [b for m in response for b in m.content if isinstance(b, ToolUseBlock)]
    results = _results(array)
    interrupted = [u for u in uses if _to_redo(u, results, tools)]
    if not interrupted:
        return ResumedCalls(array)
    answers: dict[str, list[Message]] = {}
    for use in interrupted:
        answers[use.id] = await _answer(use, tools, ctx, permission, hooks)
    return _appended(array, interrupted, results, answers, tools)


def _last_response(messages: list[Message]) -> list[AssistantMessage]:
    """The assistant messages of the last model response (they share one message_id)."""
    last = next((m for m in reversed(messages) if isinstance(m, AssistantMessage)), None)
    if last is None:
        return []
    if not last.message_id:
        return [last]
    return [
        m for m in messages if isinstance(m, AssistantMessage) and m.message_id == last.message_id
    ]


def _results(messages: list[Message]) -> dict[str, tuple[UserMessage, ToolResultBlock]]:
    found: dict[str, tuple[UserMessage, ToolResultBlock]] = {}
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    found[block.tool_use_id] = (message, block)
    return found


def _to_redo(
    use: ToolUseBlock,
    results: dict[str, tuple[UserMessage, ToolResultBlock]],
    tools: Sequence[Tool],
) -> bool:
    """No result at all; or a stand-in flagged `interrupted` (an MCP tool's own abort result
    too) of a call safe to re-run; or the loader's stand-in (`RESUMED`: the process died
    before the result was written) of any call."""
    if use.id not in results:
        return True
    why = results[use.id][1].interrupted
    if why is None:
        return False
    return why is Interruption.RESUMED or can_rerun(find_tool(tools, use.name))


async def _answer(
    use: ToolUseBlock,
    tools: Sequence[Tool],
    ctx: ToolContext,
    permission: PermissionChecker | None,
    hooks: ToolHooks | None,
) -> list[Message]:
    """The call's result and what came with it: a re-run that was refused keeps its
    `permission_denied` record (`RunResult.denials`), a hook's context its attachment."""
    if not can_rerun(find_tool(tools, use.name)):
        return [tool_result_message(use.id, MAY_HAVE_RUN, is_error=True)]
    messages: list[Message] = []
    async for message in run_tool_call(use, tools, ctx, permission=permission, hooks=hooks):
        if not isinstance(message, ProgressMessage):
            messages.append(message)
    if not any(isinstance(m, UserMessage) and _answers(m, use.id) for m in messages):
        messages.insert(0, tool_result_message(use.id, MAY_HAVE_RUN, is_error=True))
    return messages


def _answers(message: UserMessage, tool_use_id: str) -> bool:
    return not isinstance(message.content, str) and any(
        isinstance(b, ToolResultBlock) and b.tool_use_id == tool_use_id for b in message.content
    )


def _appended(
    array: list[Message],
    interrupted: list[ToolUseBlock],
    results: dict[str, tuple[UserMessage, ToolResultBlock]],
    answers: dict[str, list[Message]],
    tools: Sequence[Tool],
) -> ResumedCalls:
    """Void the placeholder messages and append the answers (tool_results are moved in front
    of any text when the request is normalized, so the end of the array is a valid place)."""
    ids = {u.id for u in interrupted}
    holders = {results[u.id][0].uuid: results[u.id][0] for u in interrupted if u.id in results}
    appended: list[Message] = []
    for holder in holders.values():
        appended.append(
            TombstoneMessage(target_uuid=holder.uuid, reason=TombstoneReason.CALL_REDONE)
        )
        kept = _without_results(holder, ids)
        if kept is not None:
            appended.append(kept)
    for use in interrupted:
        appended.extend(answers[use.id])
    out = [m for m in array if m.uuid not in holders]
    out.extend(m for m in appended if not isinstance(m, TombstoneMessage))
    rerun = tuple(u.id for u in interrupted if can_rerun(find_tool(tools, u.name)))
    marked = tuple(u.id for u in interrupted if u.id not in rerun)
    return ResumedCalls(out, appended=tuple(appended), rerun=rerun, marked=marked)


def _without_results(message: Message, ids: set[str]) -> UserMessage | None:
    """`message` without the tool_results for `ids` (None when nothing else is left)."""
    assert isinstance(message, UserMessage) and not isinstance(message.content, str)
    rest = tuple(
        b for b in message.content if not (isinstance(b, ToolResultBlock) and b.tool_use_id in ids)
    )
    return replace(message, content=rest, uuid=new_uuid()) if rest else None
