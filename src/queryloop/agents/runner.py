"""Running one subagent: the same query loop over its own message array.

A `SubagentRun` builds the child's pieces from its `SubagentHost` — system prompt (the agent
definition's body and the environment), a subset of the parent's tools, a permission checker
that is never looser than the parent's, the same hooks (PreToolUse / PostToolUse fire for its
calls; SubagentStart before it starts, SubagentStop instead of Stop), phase-two attachments
only, its own turn limit and abort signal (linked to the parent's) — and runs
`queryloop.loop.query` to its terminal. Each message goes to the sidechain transcript as it
is created and out as a progress item for the parent's UI; each response's usage and cost are
recorded in the parent session. The outcome always says how it ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..abort import AbortSignal
from ..context import AttachmentContext
from ..context.attachments import get_attachment_messages
from ..loop.deps import QueryParams
from ..loop.events import MessageDraft, MessageEvent, StreamDelta, TerminalEvent
from ..loop.query import query
from ..loop.reasons import Terminal
from ..messages.constructors import (
    final_text,
    meta_user_message,
    text_of,
    tool_uses_of,
    user_message,
)
from ..messages.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    SystemSubtype,
    UserMessage,
    new_uuid,
)
from ..messages.usage import Usage
from ..providers.base import MessageComplete
from ..providers.models import cost_usd, get_model_info, model_for
from ..session import LoadedSession, Transcript
from ..session.timing import TimingRecorder
from ..tools.base import Tool, ToolContext, ToolObserver, observers
from ..tools.deferred import partition_tools
from .definitions import GENERAL_PURPOSE_AGENT, AgentDefinition
from .host import AGENT_TOOL_NAME, SubagentHost
from .sidechain import open_sidechain
from .thread import ThreadOptions, ToolSet, build_thread

PROGRESS_TYPE = "agent_progress"


def new_agent_id() -> str:
    """A fresh agent id (`a` and 16 hex digits, as Claude Code's look)."""
    return "a" + secrets.token_hex(8)


@dataclass(frozen=True)
class SubagentOutcome:
    """How a subagent ended. `text` is its final answer (or its last words when it failed)."""

    agent_id: str
    agent_type: str
    text: str
    terminal: Terminal | None
    detail: str = ""
    is_error: bool = False
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    responses: int = 0
    tool_uses: int = 0
    duration_s: float = 0.0
    transcript_path: Path | None = None
    denials: tuple[Message, ...] = ()
    """The subagent's refused calls (`permission_denied` records, tagged with its
    `agent_id`): the Agent tool passes them on, so the parent's `RunResult.denials` and
    print mode's `permission_denials` include them."""

    def tool_result_text(self) -> str:
        """What the parent model reads: the answer (never the transcript) and how to resume."""
        tokens = self.usage.total_input_tokens + self.usage.output_tokens
        footer = (
            f"agentId: {self.agent_id} (to continue this agent's work, call Agent with "
            f'resume: "{self.agent_id}")\n'
            f"<usage>total_tokens: {tokens}\ntool_uses: {self.tool_uses}\n"
            f"duration_ms: {round(self.duration_s * 1000)}</usage>"
        )
        if not self.is_error:
            answer = self.text.strip() or "(The agent finished without a final message.)"
            return f"{answer}\n\n{footer}"
        last = self.text.strip() or "(none)"
        return (
            f"The {self.agent_type} agent did not finish: {self.detail}\n"
            f"Its last message: {last}\n\n{footer}"
        )


def failure_detail(terminal: Terminal | None, detail: str, max_turns: int | None) -> str:
    """Words for a subagent that did not complete."""
    if terminal is Terminal.MAX_TURNS:
        return f"it reached its turn limit ({max_turns} turns) before giving a final answer."
    if terminal in (Terminal.ABORTED_STREAMING, Terminal.ABORTED_TOOLS):
        return "it was interrupted."
    reason = terminal.value if terminal is not None else "error"
    return f"{reason}: {detail}" if detail else f"{reason}."


def resolve_model(requested: str | None, host: SubagentHost) -> str:
    """`inherit`/None → the parent's model; an alias → its id (Anthropic models only)."""
    return model_for(requested, host.model, getattr(host.provider, "name", ""))


def child_tools(host: SubagentHost, definition: AgentDefinition) -> list[Tool]:
    """The parent's tools this agent may use; the Agent tool only above the nesting limit."""
    tools = [t for t in host.tools if definition.allows_tool(t.name, getattr(t, "aliases", ()))]
    if not host.can_nest:
        tools = [t for t in tools if t.name != AGENT_TOOL_NAME]
    return tools


def child_permission(parent: Any, definition: AgentDefinition) -> Any:
    """A checker over the parent's rules (and session approvals), in the stricter mode of the
    parent's and the definition's: a subagent never gets more permission than its parent."""
    from ..permissions import PermissionChecker, parse_mode

    if not isinstance(parent, PermissionChecker):
        return parent
    mode = parent.context.mode
    if definition.permission_mode is not None:
        wanted = parse_mode(definition.permission_mode)
        mode = mode.stricter(wanted)
    context = dataclasses.replace(parent.context, mode=mode)
    return PermissionChecker(context, ask=parent.ask_handler, can_use_tool=parent.can_use_tool)


def child_context(
    parent: ToolContext,
    abort: AbortSignal,
    *,
    subagents: SubagentHost | None = None,
    agent_id: str | None = None,
    observer: ToolObserver | None = None,
) -> ToolContext:
    """The subagent's own tool state (`ToolContext.child`): its own `subagents` host,
    `agent_id` and timing `observer` (None: the runner's caller gives none)."""
    return parent.child(abort, subagents=subagents, agent_id=agent_id, observer=observer)


def child_options(
    host: SubagentHost, definition: AgentDefinition, model: str, tools: Sequence[Tool]
) -> ThreadOptions:
    """A subagent thread's options: the definition's instructions, the parent's environment,
    user context and output limits, its tools (deferred as the parent defers them), the
    parent's serialized schemas."""
    eager, deferred = partition_tools(tools, defer=lambda t: t.name in host.deferred_names)
    return ThreadOptions(
        model=model,
        instructions=definition.prompt or GENERAL_PURPOSE_AGENT.prompt,
        environment=host.dynamic_suffix,
        tools=ToolSet(tuple(eager), tuple(deferred)),
        user_context=host.user_context,
        limits=host.limits,
        thinking=host.thinking,
        parent_schemas=host.schemas,
        cache_ttl=host.main.cache_ttl,
        nested_memory=host.main.nested_memory,
        path_rules=host.main.path_rules,
    )


def progress_base(run: SubagentRun) -> dict[str, Any]:
    """What every progress record of `run` carries: who it is. The first record, `kind:
    started`, comes before the subagent does anything, so a UI can name it in a permission
    question (`PermissionRequest.agent_id`) before its first message."""
    return {
        "type": PROGRESS_TYPE,
        "agent_id": run.agent_id,
        "agent_type": run.definition.name,
        "description": run.description,
    }


def progress_item(run: SubagentRun, message: Message) -> dict[str, Any] | None:
    """A compact progress record for the parent's UI (None for messages not worth showing)."""
    base = progress_base(run)
    if isinstance(message, AssistantMessage):
        uses = tool_uses_of(message)
        text = text_of(message).strip()
        if not uses and not text:
            return None
        calls = [{"name": u.name, "input": dict(u.input)} for u in uses]
        return {**base, "kind": "assistant", "text": text[:1000], "tool_uses": calls}
    if isinstance(message, UserMessage) and not isinstance(message.content, str):
        results = [b for b in message.content if b.type == "tool_result"]
        if results:
            errors = sum(1 for b in results if getattr(b, "is_error", False))
            return {**base, "kind": "tool_results", "count": len(results), "errors": errors}
    return None


class SubagentRun:
    """One subagent from its prompt to its outcome; iterate `run()` for progress items."""

    def __init__(
        self,
        host: SubagentHost,
        definition: AgentDefinition,
        prompt: str,
        *,
        parent_ctx: ToolContext,
        description: str = "",
        tool_use_id: str = "",
        model: str | None = None,
        agent_id: str | None = None,
        resumed: LoadedSession | None = None,
        link_abort: bool = True,
    ) -> None:
        self.host = host
        self.definition = definition or GENERAL_PURPOSE_AGENT
        self.prompt = prompt
        self.parent_ctx = parent_ctx
        self.description = description
        self.tool_use_id = tool_use_id
        self.model = resolve_model(model or definition.model, host)
        self.agent_id = agent_id or new_agent_id()
        self.resumed = resumed
        self.link_abort = link_abort
        self.abort = AbortSignal()
        self.outcome: SubagentOutcome | None = None
        self.transcript: Transcript | None = None
        self.timing: TimingRecorder | None = None
        self.trace = host.telemetry.thread(
            agent_name=self.definition.name,
            model=self.model,
            agent_id=self.agent_id,
            description=self.definition.description,
        )
        """The subagent's spans, nested under the Agent tool call that started it."""
        self._usage = Usage()
        self._cost = 0.0
        self._responses = 0
        self._tool_uses = 0
        self._denials: list[Message] = []

    # ---- building the child ------------------------------------------------------------

    def _params(self) -> QueryParams:
        host, definition = self.host, self.definition
        tools = child_tools(host, definition)
        permission = child_permission(host.permission, definition)
        own = host.child(agent_id=self.agent_id, tools=tools, permission=permission)
        ctx = child_context(
            self.parent_ctx,
            self.abort,
            subagents=own,
            agent_id=self.agent_id,
            observer=observers(self.timing, self.trace),
        )
        self.thread = build_thread(
            child_options(host, definition, self.model, tools),
            provider=host.provider,
            permission=permission,
            hooks=host.hooks,
            tool_context=ctx,
        )
        stop_hooks = []
        if host.hooks is not None:
            agent = {
                "agent_id": self.agent_id,
                "agent_type": definition.name,
                "agent_transcript_path": self.transcript.location if self.transcript else "",
            }
            stop_hooks.append(host.hooks.as_stop_hook(subagent=True, agent=agent))
        return self.thread.query_params(
            tool_hooks=host.hooks,
            stop_hooks=stop_hooks,
            attachments=self._turn_attachments,
            max_turns=definition.max_turns,
            session_id=host.session_id,
        )

    def _attachment_context(self, ctx: ToolContext) -> AttachmentContext:
        tasks, thread = self.host.tasks, self.thread
        nests = any(t.name == AGENT_TOOL_NAME for t in thread.tools.all)
        return AttachmentContext(
            cwd=ctx.cwd,
            tool_context=ctx,
            tools=thread.builder.tool_names,
            deferred_tools=[t.name for t in thread.tools.deferred],
            agent_types=self.host.agents.listing if nests else {},
            task_notifications=tasks.drain_notifications(self.agent_id) if tasks else (),
            is_main_thread=False,
            nested_memory=self.host.main.nested_memory,
            path_rules=self.host.main.path_rules,
        )

    async def _turn_attachments(self, messages: Sequence[Message], ctx: ToolContext) -> list[Any]:
        return list(await get_attachment_messages(None, self._attachment_context(ctx), messages))

    # ---- running -----------------------------------------------------------------------

    async def run(self) -> AsyncIterator[dict[str, Any]]:
        """Run to the end, yielding progress items; `outcome` is set when this returns
        (also after a failure). Cancellation propagates, with the transcript kept."""
        started = time.monotonic()
        self.transcript = open_sidechain(
            self.host.sidechains, self.agent_id, self._meta(), resumed=self.resumed
        )
        self.timing = self._timing()
        watcher = self._watch_parent_abort()
        terminal: TerminalEvent | None = None
        messages: list[Message] = list(self.resumed.messages) if self.resumed else []
        try:
            yield {**progress_base(self), "kind": "started"}  # before any question it asks
            params = self._params()
            for message in await self._opening(params):
                messages.append(message)
                self._persist(message)
            async for event in self.trace.run(query(params, messages), prompt=self.prompt):
                item = self._observe(event)
                if isinstance(event, TerminalEvent):
                    terminal = event
                if item is not None:
                    yield item
            self.outcome = self._outcome(terminal, started)
        except Exception as exc:  # the parent must always hear how it ended
            self.outcome = self._outcome(None, started, error=exc, messages=messages)
        finally:
            if watcher is not None:
                watcher.cancel()
            if self.transcript is not None:
                self.transcript.close()

    async def _opening(self, params: QueryParams) -> list[Message]:
        """The prompt, SubagentStart hooks' context, and phase-two attachments."""
        new: list[Message] = [user_message(self.prompt)]
        hooks = self.host.hooks
        if hooks is not None and self.resumed is None:
            outcome = await hooks.subagent_start(self.agent_id, self.definition.name)
            if outcome.additional_context:
                new.append(meta_user_message(outcome.additional_context))
        context = self._attachment_context(params.tool_context)
        earlier = list(self.resumed.messages) if self.resumed else []
        new.extend(await get_attachment_messages(self.prompt, context, [*earlier, *new]))
        return new

    def _timing(self) -> TimingRecorder | None:
        """Timing records in the sidechain, written as the main thread writes its own (the
        session report draws the subagent's lane from them)."""
        if self.transcript is None:
            return None
        return TimingRecorder(
            self.transcript.append_record, session_id=lambda: self.agent_id, cost=_cost
        )

    def _observe(self, event: Any) -> dict[str, Any] | None:
        if self.timing is not None:
            self.timing.observe(event)
        if isinstance(event, MessageDraft):
            # Durable before the tool it holds starts (see `MessageDraft`).
            if self.transcript is not None:
                self.transcript.append(event.message, partial=True)
            return None
        if isinstance(event, MessageEvent):
            self._persist(event.message)
            if isinstance(event.message, AssistantMessage):
                self._tool_uses += len(tool_uses_of(event.message))
            self._note_denial(event.message)
            return progress_item(self, event.message)
        if isinstance(event, StreamDelta) and isinstance(event.event, MessageComplete):
            self._record_usage(event.event.response.usage, event.event.response.model)
        return None

    def _note_denial(self, message: Message) -> None:
        """Keep a copy of a refusal for the parent (a fresh uuid: the parent's transcript
        gets its own record; `agent_id` says whose call it was)."""
        if (
            isinstance(message, SystemMessage)
            and message.subtype is SystemSubtype.PERMISSION_DENIED
        ):
            metadata = {**message.metadata, "agent_id": self.agent_id}
            self._denials.append(dataclasses.replace(message, uuid=new_uuid(), metadata=metadata))

    def _persist(self, message: Message) -> None:
        if self.transcript is not None:
            self.transcript.append(message)

    def _record_usage(self, usage: Usage, model: str) -> None:
        model = model or self.model
        cost = _cost(usage, model)
        self._usage = self._usage + usage
        self._cost += cost
        self._responses += 1
        if self.transcript is not None:
            self.transcript.append_usage(usage, cost_usd=cost, model=model)

    def _outcome(
        self,
        terminal: TerminalEvent | None,
        started: float,
        *,
        error: BaseException | None = None,
        messages: Sequence[Message] = (),
    ) -> SubagentOutcome:
        reason = terminal.reason if terminal is not None else None
        final = terminal.messages if terminal is not None else tuple(messages)
        detail = terminal.detail if terminal is not None else f"{type(error).__name__}: {error}"
        ok = reason is Terminal.COMPLETED
        return SubagentOutcome(
            agent_id=self.agent_id,
            agent_type=self.definition.name,
            text=final_text(final),
            terminal=reason,
            detail=detail if ok else failure_detail(reason, detail, self.definition.max_turns),
            is_error=not ok,
            usage=self._usage,
            cost_usd=self._cost,
            responses=self._responses,
            tool_uses=self._tool_uses,
            duration_s=time.monotonic() - started,
            transcript_path=self.transcript.ref.path if self.transcript else None,
            denials=tuple(self._denials),
        )

    def _meta(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "agent_type": self.definition.name,
            "parent_session_id": self.host.session_id,
            "parent_agent_id": self.host.agent_id,
            "parent_tool_use_id": self.tool_use_id,
            "depth": self.host.depth + 1,
            "description": self.description,
            "model": self.model,
        }

    def _watch_parent_abort(self) -> asyncio.Task[None] | None:
        if not self.link_abort:
            return None
        parent = self.parent_ctx.abort

        async def watch() -> None:
            await parent.wait()
            self.abort.abort(parent.reason or "parent")

        return asyncio.get_running_loop().create_task(watch())


def _cost(usage: Usage, model: str) -> float:
    return cost_usd(usage, model) if get_model_info(model).known else 0.0


async def cancel_quietly(task: asyncio.Task[Any]) -> None:
    """Cancel a task and wait for it, ignoring its cancellation."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
