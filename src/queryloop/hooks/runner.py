"""`HookRunner`: every hook point of a session (docs/hooks.md says which fires when).

The tool-call events are `hooks.tool_events`; this module adds the session-level ones:
UserPromptSubmit, SessionStart, SessionEnd, PreCompact, PostCompact, SubagentStart, Stop and
SubagentStop, StopFailure, Notification, InstructionsLoaded and ConfigChange.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..messages.types import Message
from .config import CallableHook, timeout_of
from .events import SESSION_END_BUDGET, SESSION_END_MAX, HookEvent
from .machinery import joined
from .tool_events import ToolEvents, tool_response
from .types import HookOutcome, StopHook, StopHookInput, StopHookResult
from .verdict import Merged

__all__ = ["HookRunner", "tool_response"]


class HookRunner(ToolEvents):
    """Implements `tools.base.ToolHooks`, `hooks.types.LoopHooks` and the session-level
    hook points (see `HookMachinery` for the constructor)."""

    async def user_prompt_submit(self, prompt: str) -> HookOutcome:
        """Block the prompt (reason for the user) or add context for the model."""
        merged = await self.run_event(HookEvent.USER_PROMPT_SUBMIT, None, {"prompt": prompt})
        outcome = _outcome(merged)
        late = self.take_async_context()
        if late and not outcome.blocked:  # background hooks that finished since the last turn
            context = joined([c for c in (late, outcome.additional_context) if c])
            outcome = HookOutcome(False, "", context, outcome.stop_reason)
        return outcome

    async def user_prompt_expansion(
        self, prompt: str, command: str, args: str, source: str
    ) -> HookOutcome:
        """A typed `/command args` is about to expand into its skill's or command's text
        (before its `!` lines run): block it (reason for the user) or add context. The
        matcher filters the command's name; `source` is `plugin` or `skill`."""
        fields = {
            "expansion_type": "slash_command",
            "command_name": command,
            "command_args": args,
            "command_source": source,
            "prompt": prompt,
        }
        return _outcome(await self.run_event(HookEvent.USER_PROMPT_EXPANSION, command, fields))

    async def session_start(self, source: str = "startup", model: str | None = None) -> HookOutcome:
        """`source`: startup, resume, clear or compact; returns context for the model."""
        fields: dict[str, Any] = {"source": source}
        if model:
            fields["model"] = model
        return _outcome(await self.run_event(HookEvent.SESSION_START, source, fields))

    async def session_end(self, reason: str = "other") -> None:
        """The session ends (`reason`: clear, logout, prompt_input_exit, other). Hooks share
        a 1.5 s budget, raised to the longest hook timeout configured (at most 60 s)."""
        if not self.has_hooks(HookEvent.SESSION_END):
            return
        hooks = self.config.hooks_for(HookEvent.SESSION_END, reason)
        own = [
            timeout_of(h, HookEvent.SESSION_END)
            for h in hooks
            if not isinstance(h, CallableHook) and h.timeout is not None
        ]
        budget = min(max([SESSION_END_BUDGET, *own]), SESSION_END_MAX)
        await self.run_event(HookEvent.SESSION_END, reason, {"reason": reason}, timeout=budget)

    async def pre_compact(self, trigger: str, instructions: str = "") -> HookOutcome:
        """`trigger`: manual or auto; context = extra summary instructions."""
        fields = {"trigger": trigger, "custom_instructions": instructions}
        return _outcome(await self.run_event(HookEvent.PRE_COMPACT, trigger, fields))

    async def post_compact(self, trigger: str, summary: str) -> None:
        """After a compaction: the summary it wrote (`compact_summary`); no decision."""
        fields = {"trigger": trigger, "compact_summary": summary}
        await self.run_event(HookEvent.POST_COMPACT, trigger, fields)

    async def subagent_start(self, agent_id: str, agent_type: str) -> HookOutcome:
        """SubagentStart (matcher: the agent type): context for the subagent's first prompt."""
        fields = {"agent_id": agent_id, "agent_type": agent_type}
        return _outcome(await self.run_event(HookEvent.SUBAGENT_START, agent_type, fields))

    async def stop_failure(self, error: BaseException, last_message: str = "") -> None:
        """The turn ended on an API error; `error` (its type: rate_limit, server_error, ...)
        is what the matcher selects, and the hooks' output is ignored."""
        kind = stop_failure_type(error)
        fields = {
            "error": kind,
            "error_details": str(error),
            "last_assistant_message": last_message or f"API Error: {error}",
        }
        await self.run_event(HookEvent.STOP_FAILURE, kind, fields)

    async def notification(
        self, message: str, notification_type: str, title: str | None = None
    ) -> None:
        """Something waits for the user (`permission_prompt`, `idle_prompt`, ...)."""
        fields: dict[str, Any] = {"message": message, "notification_type": notification_type}
        if title:
            fields["title"] = title
        await self.run_event(HookEvent.NOTIFICATION, notification_type, fields)

    async def instructions_loaded(
        self, file_path: str, memory_type: str, load_reason: str, **extra: Any
    ) -> None:
        """A memory file (QUERYLOOP.md, CLAUDE.md, ...) reached the context; observability
        only. `extra`: `parent_file_path`, or `globs` and `trigger_file_path`."""
        fields = {"file_path": file_path, "memory_type": memory_type, "load_reason": load_reason}
        await self.run_event(HookEvent.INSTRUCTIONS_LOADED, load_reason, {**fields, **extra})

    async def config_change(self, source: str, file_path: str) -> bool:
        """A settings file changed during the session; True when a hook blocks it (never
        for `policy_settings`). queryloop applies settings at the next session either way."""
        fields = {"source": source, "file_path": file_path}
        merged = await self.run_event(HookEvent.CONFIG_CHANGE, source, fields)
        return bool(merged.blocks()) and source != "policy_settings"

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
        (the matcher selects by agent type); the path becomes the subagent's `messages` in
        Claude Code's format when the session keeps such transcripts. `additionalContext`
        goes on like a block (Claude Code: non-error feedback)."""
        event = HookEvent.SUBAGENT_STOP if subagent else HookEvent.STOP
        fields = {
            "stop_hook_active": stop_hook_active,
            "last_assistant_message": last_assistant_text,
            "background_tasks": [],
            "session_crons": [],
            **(agent or {}),
        }
        if subagent and agent and "agent_id" in agent and self.has_hooks(event):
            readable = self.sidechain_transcript(str(agent["agent_id"]), messages)
            fields["agent_transcript_path"] = readable or fields.get("agent_transcript_path", "")
        target = str(agent["agent_type"]) if agent and "agent_type" in agent else None
        merged = await self.run_event(event, target, fields)
        stop = merged.stop()
        if stop is not None:
            return StopHookResult("prevent", stop)
        feedback = merged.blocks() + [v.context for v in merged.verdicts if v.context]
        if feedback:
            return StopHookResult("block", joined(feedback))
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


def stop_failure_type(error: BaseException) -> str:
    """Claude Code's StopFailure `error` value for a provider error."""
    from ..providers import errors as e

    kinds: list[tuple[type[BaseException], str]] = [
        (e.RateLimitError, "rate_limit"),
        (e.OverloadedError, "overloaded"),
        (e.AuthenticationError, "authentication_failed"),
        (e.PermissionDeniedError, "authentication_failed"),
        (e.NotFoundError, "model_not_found"),
        (e.InvalidRequestError, "invalid_request"),
        (e.PromptTooLongError, "invalid_request"),
        (e.MediaError, "invalid_request"),
        (e.RequestTooLargeError, "invalid_request"),
        (e.ServerError, "server_error"),
    ]
    return next((kind for cls, kind in kinds if isinstance(error, cls)), "unknown")


def _outcome(merged: Merged) -> HookOutcome:
    blocks = merged.blocks()
    return HookOutcome(
        blocked=bool(blocks),
        reason=joined(blocks),
        additional_context=merged.contexts(),
        stop_reason=merged.stop(),
    )


if TYPE_CHECKING:  # mypy proves HookRunner satisfies the executor's and the loop's protocols
    from ..tools.base import ToolEventHooks, ToolHooks
    from .types import LoopHooks

    def _conforms(runner: HookRunner) -> tuple[ToolHooks, ToolEventHooks, LoopHooks]:
        return runner, runner, runner
