"""`HookRunner`: runs the configured hooks for each event and turns their output into outcomes.

Shell hooks follow Claude Code's protocol: the event JSON on stdin; exit 0 = fine (stdout may be
a JSON object with a decision), exit 2 = block (stderr is the message), any other exit code =
a non-blocking error reported to the user. Hooks matching one event run concurrently; their
verdicts merge in configuration order (deny > ask > allow; the last `updatedInput` wins). A
hook that crashes, hangs or prints garbage becomes a `HookWarning`, never an exception.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..messages.blocks import TextBlock
from ..messages.types import Message
from ..tools.base import PostToolUseOutcome, PreToolUseOutcome, ToolContext, ToolResult
from .callables import run_callable_hook
from .config import CommandHook, HookEvent, HooksConfig
from .shell import HookRun, run_command_hook
from .types import HookOutcome, HookWarning, StopHook, StopHookInput, StopHookResult

log = logging.getLogger(__name__)

_PLAIN_TEXT_IS_CONTEXT = {
    HookEvent.USER_PROMPT_SUBMIT,
    HookEvent.SESSION_START,
    HookEvent.PRE_COMPACT,
}


@dataclass
class _Verdict:
    """One hook's output, normalised."""

    block: str | None = None
    decision: Literal["allow", "deny", "ask"] | None = None
    reason: str = ""
    updated_input: Mapping[str, Any] | None = None
    context: str | None = None
    stop: str | None = None


@dataclass
class _Merged:
    verdicts: list[_Verdict] = field(default_factory=list)

    def blocks(self) -> list[str]:
        return [v.block for v in self.verdicts if v.block is not None]

    def contexts(self) -> str | None:
        parts = [v.context for v in self.verdicts if v.context]
        return "\n".join(parts) if parts else None

    def stop(self) -> str | None:
        return next((v.stop for v in self.verdicts if v.stop is not None), None)


class HookRunner:
    """Implements `tools.base.ToolHooks` and the session-level hook points.

    `on_warning` receives each `HookWarning` as it happens (the CLI prints it); they are also
    kept in `warnings` and logged.
    """

    def __init__(
        self,
        config: HooksConfig,
        *,
        cwd: Path,
        session_id: str,
        transcript_path: Path | str | None = None,
        env: Mapping[str, str] | None = None,
        permission_mode: str = "default",
        on_warning: Callable[[HookWarning], None] | None = None,
    ) -> None:
        self.config = config
        self.cwd = cwd
        self.session_id = session_id
        self.transcript_path = str(transcript_path or "")
        self.permission_mode = permission_mode
        self.on_warning = on_warning
        self.warnings: list[HookWarning] = []
        project = str(cwd)
        self._env = {
            **os.environ,
            **(env or {}),
            "QUERYLOOP_PROJECT_DIR": project,
            "CLAUDE_PROJECT_DIR": project,
        }

    # -- ToolHooks ------------------------------------------------------------------------

    async def pre_tool_use(
        self, tool_name: str, input: Mapping[str, Any], tool_use_id: str, ctx: ToolContext
    ) -> PreToolUseOutcome:
        """Allow, deny, ask or change the input of a tool call before it runs."""
        fields = {"tool_name": tool_name, "tool_input": dict(input), "tool_use_id": tool_use_id}
        merged = await self._run(HookEvent.PRE_TOOL_USE, tool_name, fields)
        denials = [v.block for v in merged.verdicts if v.block is not None] + [
            v.reason or "denied by a PreToolUse hook"
            for v in merged.verdicts
            if v.decision == "deny"
        ]
        updated = [v.updated_input for v in merged.verdicts if v.updated_input is not None]
        stop = merged.stop()
        if denials:
            return PreToolUseOutcome("deny", "\n".join(denials), stop_reason=stop)
        for kind in ("ask", "allow"):
            chosen = [v for v in merged.verdicts if v.decision == kind]
            if chosen:
                reason = "\n".join(v.reason for v in chosen if v.reason)
                return PreToolUseOutcome(kind, reason, updated[-1] if updated else None, stop)
        return PreToolUseOutcome(None, "", updated[-1] if updated else None, stop)

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
        }
        merged = await self._run(HookEvent.POST_TOOL_USE, tool_name, fields)
        blocks = merged.blocks()
        return PostToolUseOutcome(
            additional_context=merged.contexts(),
            block_reason="\n".join(blocks) if blocks else None,
            stop_reason=merged.stop(),
        )

    # -- session-level events -------------------------------------------------------------

    async def user_prompt_submit(self, prompt: str) -> HookOutcome:
        """Block the prompt (reason for the user) or add context for the model."""
        merged = await self._run(HookEvent.USER_PROMPT_SUBMIT, None, {"prompt": prompt})
        return _outcome(merged)

    async def session_start(self, source: str = "startup") -> HookOutcome:
        """`source`: startup, resume, clear or compact; returns context for the model."""
        merged = await self._run(HookEvent.SESSION_START, source, {"source": source})
        return _outcome(merged)

    async def pre_compact(self, trigger: str, instructions: str = "") -> HookOutcome:
        """`trigger`: manual or auto; context = extra summary instructions."""
        fields = {"trigger": trigger, "custom_instructions": instructions}
        return _outcome(await self._run(HookEvent.PRE_COMPACT, trigger, fields))

    async def subagent_start(self, agent_id: str, agent_type: str) -> HookOutcome:
        """SubagentStart (matcher: the agent type): context for the subagent's first prompt."""
        fields = {"agent_id": agent_id, "agent_type": agent_type}
        return _outcome(await self._run(HookEvent.SUBAGENT_START, agent_type, fields))

    async def stop(
        self,
        messages: Sequence[Message] = (),
        last_assistant_text: str = "",
        stop_hook_active: bool = False,
        *,
        subagent: bool = False,
        agent: Mapping[str, Any] | None = None,
    ) -> StopHookResult:
        """Stop / SubagentStop: `block` makes the loop go on with the message; `prevent` ends it.

        For SubagentStop, `agent` adds `agent_id`, `agent_type` and `agent_transcript_path`
        (the matcher selects by agent type)."""
        event = HookEvent.SUBAGENT_STOP if subagent else HookEvent.STOP
        fields = {
            "stop_hook_active": stop_hook_active,
            "last_assistant_message": last_assistant_text,
            **(agent or {}),
        }
        target = str(agent["agent_type"]) if agent and "agent_type" in agent else None
        merged = await self._run(event, target, fields)
        stop = merged.stop()
        if stop is not None:
            return StopHookResult("prevent", stop)
        blocks = merged.blocks()
        if blocks:
            return StopHookResult("block", "\n".join(blocks))
        return StopHookResult("continue")

    def as_stop_hook(
        self, *, subagent: bool = False, agent: Mapping[str, Any] | None = None
    ) -> StopHook:
        """This runner's Stop (or SubagentStop) hooks as the loop's `StopHook` callable."""

        async def hook(data: StopHookInput) -> StopHookResult | None:
            return await self.stop(
                data.messages,
                data.last_assistant_text,
                data.stop_hook_active,
                subagent=subagent,
                agent=agent,
            )

        return hook

    # -- machinery ------------------------------------------------------------------------

    def payload(self, event: HookEvent, fields: Mapping[str, Any]) -> dict[str, Any]:
        """The JSON object a hook reads (Claude Code's field names)."""
        return {
            "session_id": self.session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.cwd),
            "hook_event_name": event.value,
            "permission_mode": self.permission_mode,
            **fields,
        }

    async def _run(
        self, event: HookEvent, target: str | None, fields: Mapping[str, Any]
    ) -> _Merged:
        hooks = self.config.hooks_for(event, target)
        if not hooks:
            return _Merged()
        data = self.payload(event, fields)
        runs = await asyncio.gather(
            *(
                run_command_hook(h, data, cwd=self.cwd, env=self._env)
                if isinstance(h, CommandHook)
                else run_callable_hook(h, data)
                for h in hooks
            )
        )
        return _Merged([self._interpret(event, run) for run in runs])

    def _interpret(self, event: HookEvent, run: HookRun) -> _Verdict:
        if run.error is not None:
            self._warn(event, run, run.error)
            return _Verdict()
        if run.exit_code == 2:
            return _Verdict(block=run.stderr.strip() or f"blocked by hook {run.label}")
        if run.exit_code != 0:
            detail = run.stderr.strip() or run.stdout.strip() or "no output"
            self._warn(event, run, f"exited with status {run.exit_code}: {detail[:500]}")
            return _Verdict()
        output = run.output if run.output is not None else self._parse_stdout(event, run)
        if not isinstance(output, Mapping):
            return _Verdict(context=output)
        message = output.get("systemMessage")
        if isinstance(message, str) and message:  # Claude Code: a note shown to the user
            self._warn(event, run, message)
        return _verdict(output)

    def _parse_stdout(self, event: HookEvent, run: HookRun) -> Mapping[str, Any] | str | None:
        text = run.stdout.strip()
        if not text:
            return None
        if text.startswith("{"):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                self._warn(event, run, f"printed invalid JSON ({exc.msg}); its output was ignored")
                return None
            if isinstance(value, Mapping):
                return value
        if event in _PLAIN_TEXT_IS_CONTEXT:
            return text
        self._warn(event, run, f"printed output that is not a JSON object; ignored: {text[:200]!r}")
        return None

    def _warn(self, event: HookEvent, run: HookRun, message: str) -> None:
        warning = HookWarning(event.value, run.label, message)
        self.warnings.append(warning)
        log.warning("%s hook %r %s", event.value, run.label, message)
        if self.on_warning is not None:
            try:
                self.on_warning(warning)
            except Exception:  # a UI callback must not break the hook path
                log.exception("on_warning callback failed")


def _verdict(output: Mapping[str, Any]) -> _Verdict:
    """Claude Code's JSON output fields (current and legacy) for every event.

    `decision: "block"` blocks (for PreToolUse: denies, the legacy form); `"approve"` is the
    legacy PreToolUse allow.
    """
    specific = output.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    verdict = _Verdict(reason=str(output.get("reason") or ""))
    if output.get("continue") is False:
        verdict.stop = str(output.get("stopReason") or "a hook stopped the session")
    decision = output.get("decision")
    if decision == "block":
        verdict.block = verdict.reason or "blocked by a hook"
    elif decision == "approve":
        verdict.decision = "allow"
    permission = specific.get("permissionDecision")
    if permission in ("allow", "deny", "ask"):
        verdict.decision = permission
        verdict.reason = str(specific.get("permissionDecisionReason") or verdict.reason)
    updated = specific.get("updatedInput")
    if isinstance(updated, Mapping):
        verdict.updated_input = dict(updated)
    context = specific.get("additionalContext")
    if isinstance(context, str) and context:
        verdict.context = context
    return verdict


def _outcome(merged: _Merged) -> HookOutcome:
    blocks = merged.blocks()
    return HookOutcome(
        blocked=bool(blocks),
        reason="\n".join(blocks),
        additional_context=merged.contexts(),
        stop_reason=merged.stop(),
    )


def tool_response(result: ToolResult) -> Any:
    """What PostToolUse hooks see as `tool_response`: the tool's data, or its text."""
    if result.data is not None:
        try:
            json.dumps(result.data)
            return result.data
        except (TypeError, ValueError):
            pass
    if isinstance(result.content, str):
        text = result.content
    else:
        text = "\n".join(b.text for b in result.content if isinstance(b, TextBlock))
    return {"content": text, "is_error": result.is_error}


if TYPE_CHECKING:  # mypy proves HookRunner satisfies the executor's protocol
    from ..tools.base import ToolHooks

    def _conforms(runner: HookRunner) -> ToolHooks:
        return runner
