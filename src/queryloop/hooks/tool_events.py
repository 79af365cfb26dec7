"""The tool-call events: PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest,
PermissionDenied, PostToolBatch, CwdChanged, and TaskCreated / TaskCompleted (the todo list).

Each method builds the event's input fields (Claude Code's names) and turns the merged
verdicts into the outcome its caller acts on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..messages.blocks import TextBlock
from ..tools.base import PostToolUseOutcome, PreToolUseOutcome, ToolContext, ToolResult
from .events import HookEvent
from .machinery import HookMachinery, ToolCall, joined
from .types import HookOutcome, PermissionRequestOutcome, ToolCallRecord
from .verdict import Merged

TODO_TOOL = "TodoWrite"


class ToolEvents(HookMachinery):
    """`HookMachinery` plus the hook points the tool executor and the loop call."""

    async def pre_tool_use(
        self, tool_name: str, input: Mapping[str, Any], tool_use_id: str, ctx: ToolContext
    ) -> PreToolUseOutcome:
        """Allow, deny, ask or change the input of a tool call before it runs; a TodoWrite
        that adds or completes todos runs TaskCreated / TaskCompleted hooks, which may
        refuse it."""
        fields = {
            "tool_name": tool_name,
            "tool_input": dict(input),
            "tool_use_id": tool_use_id,
            **_thread(ctx),
        }
        merged = await self.run_event(
            HookEvent.PRE_TOOL_USE, tool_name, fields, tool=ToolCall(tool_name, input, ctx.cwd)
        )
        outcome = _pre_outcome(merged)
        if outcome.decision != "deny" and tool_name == TODO_TOOL:
            refused = await self._todo_events(input, ctx)
            if refused:
                return PreToolUseOutcome("deny", refused, stop_reason=outcome.stop_reason)
        return outcome

    async def post_tool_use(
        self,
        tool_name: str,
        input: Mapping[str, Any],
        result: ToolResult,
        tool_use_id: str,
        ctx: ToolContext,
    ) -> PostToolUseOutcome:
        """Add context for the model after a tool ran, or block its result."""
        fields = {
            "tool_name": tool_name,
            "tool_input": dict(input),
            "tool_response": tool_response(result),
            "tool_use_id": tool_use_id,
            **_thread(ctx),
        }
        merged = await self.run_event(
            HookEvent.POST_TOOL_USE, tool_name, fields, tool=ToolCall(tool_name, input, ctx.cwd)
        )
        for verdict in merged.verdicts:
            if (
                "updatedToolOutput" in verdict.specific
                or "updatedMCPToolOutput" in verdict.specific
            ):
                self.warn(HookEvent.POST_TOOL_USE, tool_name,
                          "updatedToolOutput is not supported by queryloop; the tool's own "
                          "output was kept")  # fmt: skip
        return _post_outcome(merged)

    async def post_tool_use_failure(
        self,
        tool_name: str,
        input: Mapping[str, Any],
        error: str,
        tool_use_id: str,
        ctx: ToolContext,
        *,
        is_interrupt: bool = False,
        duration_ms: int | None = None,
    ) -> PostToolUseOutcome:
        """After a tool that started failed: context (or exit 2's stderr) for the model."""
        fields: dict[str, Any] = {
            "tool_name": tool_name,
            "tool_input": dict(input),
            "tool_use_id": tool_use_id,
            "error": error,
            "is_interrupt": is_interrupt,
            **_thread(ctx),
        }
        if duration_ms is not None:
            fields["duration_ms"] = duration_ms
        merged = await self.run_event(
            HookEvent.POST_TOOL_USE_FAILURE,
            tool_name,
            fields,
            tool=ToolCall(tool_name, input, ctx.cwd),
        )
        return _post_outcome(merged)

    async def permission_request(
        self,
        tool_name: str,
        input: Mapping[str, Any],
        suggestions: Sequence[Mapping[str, Any]] = (),
    ) -> PermissionRequestOutcome:
        """Before the user is asked (or, headless, before the call is refused): a hook may
        allow or deny on the user's behalf (`hookSpecificOutput.decision`). Deny rules were
        already applied; exit 2 and `ok: false` decide nothing here (Claude Code's rule)."""
        fields = {
            "tool_name": tool_name,
            "tool_input": dict(input),
            "permission_suggestions": [dict(s) for s in suggestions],
        }
        merged = await self.run_event(
            HookEvent.PERMISSION_REQUEST, tool_name, fields, tool=ToolCall(tool_name, input)
        )
        decisions = [v.specific.get("decision") for v in merged.verdicts]
        chosen = [d for d in decisions if isinstance(d, Mapping)]
        for decision in chosen:  # a deny from any hook wins
            if decision.get("behavior") == "deny":
                return PermissionRequestOutcome(
                    "deny", message=str(decision.get("message") or ""),
                    interrupt=decision.get("interrupt") is True,
                )  # fmt: skip
        for decision in chosen:
            if decision.get("behavior") == "allow":
                if decision.get("updatedPermissions"):
                    note = "updatedPermissions is not applied by queryloop (allowed once)"
                    self.warn(HookEvent.PERMISSION_REQUEST, tool_name, note)
                updated = decision.get("updatedInput")
                return PermissionRequestOutcome(
                    "allow", updated_input=dict(updated) if isinstance(updated, Mapping) else None
                )
        return PermissionRequestOutcome()

    async def permission_denied(
        self, tool_name: str, input: Mapping[str, Any], tool_use_id: str, reason: str
    ) -> bool:
        """A call was refused without anyone asked (headless); True: a hook said the model
        may retry it (`hookSpecificOutput.retry`)."""
        fields = {
            "tool_name": tool_name,
            "tool_input": dict(input),
            "tool_use_id": tool_use_id,
            "reason": reason,
        }
        merged = await self.run_event(
            HookEvent.PERMISSION_DENIED, tool_name, fields, tool=ToolCall(tool_name, input)
        )
        return any(v.specific.get("retry") is True for v in merged.verdicts)

    async def cwd_changed(self, old: Path, new: Path) -> None:
        """A tool moved the working directory (a `cd` in Bash); output is informational."""
        fields = {"old_cwd": str(old), "new_cwd": str(new), "cwd": str(new)}
        await self.run_event(HookEvent.CWD_CHANGED, None, fields)

    async def post_tool_batch(self, calls: Sequence[ToolCallRecord]) -> HookOutcome:
        """After a whole batch of tool calls resolved, before the next model call. Context
        from background (`async`) hooks that finished meanwhile is delivered here too."""
        late = self.take_async_context()
        merged = Merged()
        if self.has_hooks(HookEvent.POST_TOOL_BATCH):
            fields = {"tool_calls": [_record_json(c) for c in calls]}
            merged = await self.run_event(HookEvent.POST_TOOL_BATCH, None, fields)
        blocks = merged.blocks()
        context = joined([c for c in (late, merged.contexts()) if c]) or None
        return HookOutcome(
            blocked=bool(blocks),
            reason=joined(blocks),
            additional_context=context,
            stop_reason=merged.stop(),
        )

    async def _todo_events(self, input: Mapping[str, Any], ctx: ToolContext) -> str | None:
        """TaskCreated for each new todo, TaskCompleted for each newly completed one; the
        block messages (exit 2 or `decision: "block"`) when a hook refuses."""
        if not (self.has_hooks(HookEvent.TASK_CREATED) or self.has_hooks(HookEvent.TASK_COMPLETED)):
            return None
        before = {_todo_key(t, i): t for i, t in enumerate(ctx.todos)}
        refusals: list[str] = []
        todos = input.get("todos")
        for index, todo in enumerate(todos if isinstance(todos, list) else []):
            if not isinstance(todo, Mapping):
                continue
            key = _todo_key(todo, index)
            old = before.get(key)
            fields = {"task_id": key, "task_subject": str(todo.get("content", ""))}
            if old is None:
                merged = await self.run_event(HookEvent.TASK_CREATED, None, fields)
                refusals.extend(merged.blocks())
            done = todo.get("status") == "completed"
            if done and (old is None or old.get("status") != "completed"):
                merged = await self.run_event(HookEvent.TASK_COMPLETED, None, fields)
                refusals.extend(merged.blocks())
        return joined(refusals) or None


def _thread(ctx: ToolContext) -> dict[str, Any]:
    """The calling thread's folder, and `agent_id` when a subagent makes the call."""
    fields: dict[str, Any] = {"cwd": str(ctx.cwd)}
    if ctx.agent_id:
        fields["agent_id"] = ctx.agent_id
    return fields


def _todo_key(todo: Mapping[str, Any], index: int) -> str:
    """A todo's id, else its text: what makes it the same task from one TodoWrite to the next."""
    ident = todo.get("id")
    return str(ident) if ident else str(todo.get("content", f"todo-{index + 1}"))


def _pre_outcome(merged: Merged) -> PreToolUseOutcome:
    denials = merged.blocks() + [
        v.reason or "denied by a PreToolUse hook" for v in merged.verdicts if v.decision == "deny"
    ]
    updated = [v.updated_input for v in merged.verdicts if v.updated_input is not None]
    context = merged.contexts()
    stop = merged.stop()
    if denials:
        return PreToolUseOutcome("deny", joined(denials), stop_reason=stop)
    # Claude Code's precedence: deny > defer > ask > allow.
    for kind in ("defer", "ask", "allow"):
        chosen = [v for v in merged.verdicts if v.decision == kind]
        if chosen:
            reason = joined([v.reason for v in chosen])
            return PreToolUseOutcome(
                kind, reason, updated[-1] if updated else None, stop,
                additional_context=context, decided_by=chosen[0].label,
            )  # fmt: skip
    return PreToolUseOutcome(
        None, "", updated[-1] if updated else None, stop, additional_context=context
    )


def _post_outcome(merged: Merged) -> PostToolUseOutcome:
    blocks = merged.blocks()
    return PostToolUseOutcome(
        additional_context=merged.contexts(),
        block_reason=joined(blocks) if blocks else None,
        stop_reason=merged.stop(),
    )


def _record_json(call: ToolCallRecord) -> dict[str, Any]:
    return {
        "tool_name": call.tool_name,
        "tool_input": dict(call.tool_input),
        "tool_use_id": call.tool_use_id,
        "tool_response": call.tool_response,
    }


def tool_response(result: ToolResult) -> Any:
    """What PostToolUse hooks see as `tool_response`: the tool's data, or its text."""
    if result.data is not None:
        try:
            json.dumps(result.data)
            return result.data
        except (TypeError, ValueError):
            pass
    return {"content": result_text(result), "is_error": result.is_error}


def result_text(result: ToolResult) -> str:
    """A result's text content."""
    if isinstance(result.content, str):
        return result.content
    return "\n".join(b.text for b in result.content if isinstance(b, TextBlock))
