"""A live session's assembled parts an `Agent` drives (prepare a prompt, compact, measure the
context). The conversation itself — array, usage, cost, transcript — is `runtime.session`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agents.wiring import interrupted_subagent_notes
from ..checkpoints import CheckpointStore, checkpoint_folder
from ..compact import CompactionPipeline
from ..compact.autocompact import CompactionResult, Summarize
from ..compact.tokens import last_usage_index
from ..context import AttachmentContext, RequestBuilder, get_attachment_messages
from ..context.queue import PromptQueue
from ..hooks import HookRunner
from ..loop.deps import QueryParams
from ..messages.blocks import TextBlock
from ..messages.constructors import meta_user_message, user_message
from ..messages.types import Message
from ..permissions import PermissionChecker
from ..providers.models import ModelInfo
from ..session import Session, Transcript, new_session_id, session_path
from ..session.live import model_table_price
from ..session.timing import TimingRecorder
from ..skills.commands import skill_command_messages
from ..skills.loader import SkillSet
from ..tools.base import Tool
from .options import AgentOptions

if TYPE_CHECKING:
    from ..agents import AgentCatalog
    from ..tasks import TaskManager
    from ..tools.mcp import McpManager


class HookedSummarizer:
    """Runs PreCompact hooks before an automatic compaction's summary; a manual /compact
    (`manual` set) runs them itself, with its instructions. Hook output extends the
    summary instructions."""

    def __init__(self, inner: Summarize, hooks: HookRunner) -> None:
        self.inner = inner
        self.hooks = hooks
        self.manual = False

    async def __call__(self, messages: Sequence[Message], instruction: str) -> str:
        if not self.manual:
            outcome = await self.hooks.pre_compact("auto")
            if outcome.additional_context:
                instruction = f"{instruction}\n\n{outcome.additional_context}"
        return await self.inner(messages, instruction)


@dataclass
class PreparedPrompt:
    """The messages a prompt adds before the loop runs, or why a hook blocked it."""

    messages: list[Message]
    blocked: str | None = None


@dataclass
class Runtime:
    """A live session, owned by one `Agent`. Built by `assembly.assemble`."""

    options: AgentOptions
    session_id: str
    home: Path
    params: QueryParams
    model_info: ModelInfo
    builder: RequestBuilder
    compactor: CompactionPipeline
    summarizer: HookedSummarizer
    hooks: HookRunner
    session: Session
    """The one owner of the array, usage, cost and transcript (`queryloop.session`)."""
    mcp: McpManager | None = None
    deferred_tools: Sequence[Tool] = ()
    user_context_text: str = ""
    notices: list[str] = field(default_factory=list)
    exit_stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    prompt_queue: PromptQueue = field(default_factory=PromptQueue)
    skills: SkillSet = field(default_factory=lambda: SkillSet({}))
    checkpoints: CheckpointStore = field(default_factory=lambda: CheckpointStore(None))
    tasks: TaskManager | None = None
    """Background tasks (queryloop.agents.wiring installs it)."""
    agents: AgentCatalog | None = None
    """The subagent types of this session (re-read at each prompt)."""
    permission: PermissionChecker | None = None
    """The session's permission checker (its context holds the mode and the rules)."""
    _session_started: bool = False
    timing: TimingRecorder | None = None

    def __post_init__(self) -> None:
        # Timing records for the session report: loop events (Agent._observe) and tool calls.
        self.timing = TimingRecorder(
            self._append_record,
            session_id=lambda: self.session_id,
            cost=model_table_price,
            limits=lambda: (
                self.compactor.config.context_window,
                self.compactor.thresholds.autocompact,
            ),
        )
        self.params.tool_context.observer = self.timing

    def _append_record(self, record: Mapping[str, Any]) -> None:
        transcript = self.session.transcript
        if transcript is not None:
            transcript.append_record(record)

    def notify(self, text: str) -> None:
        """Record a notice for the user and pass it to `on_notice`."""
        self.notices.append(text)
        if self.options.on_notice is not None:
            self.options.on_notice(text)

    # ---- the session --------------------------------------------------------------------

    @property
    def transcript(self) -> Transcript | None:
        """The session's transcript writer (None when not persisted)."""
        return self.session.transcript

    def new_session(self) -> str:
        """Switch to a fresh session id and transcript (after /clear)."""
        session_id = new_session_id()
        transcript = None
        if self.options.persist:
            path = session_path(session_id, self.options.cwd, self.home)
            transcript = Transcript(path, session_id, fsync=False)
            transcript.start(model=self.params.model, cwd=str(self.options.cwd))
        self.session.clear(session_id, transcript)
        if self.options.persist:
            self.checkpoints.switch(checkpoint_folder(path.parent / session_id))
        self.session_id = session_id
        return session_id

    # ---- prompts ------------------------------------------------------------------------

    async def on_session_start(self) -> None:
        """Run SessionStart hooks once; their context becomes a meta message."""
        if self._session_started:
            return
        self._session_started = True
        resumed = bool(self.session.messages)
        outcome = await self.hooks.session_start("resume" if resumed else "startup")
        if resumed:  # after a crash: which subagents were cut off, and how to resume them
            for note in interrupted_subagent_notes(self, self.session.messages):
                self.session.append(note)
        if outcome.additional_context:
            self.session.append(meta_user_message(outcome.additional_context))

    async def prepare_prompt(self, prompt: str, messages: Sequence[Message]) -> PreparedPrompt:
        """The user's message, its attachments (@-mentions first), UserPromptSubmit hooks."""
        outcome = await self.hooks.user_prompt_submit(prompt)
        if outcome.blocked or outcome.stop_reason:
            return PreparedPrompt([], blocked=outcome.reason or outcome.stop_reason or "blocked")
        if self.agents is not None:
            self.agents.refresh()  # agent files added or removed since: the delta says so
        new: list[Message] = [user_message(prompt), *skill_command_messages(prompt, self.skills)]
        self.checkpoints.begin(new[0].uuid, prompt)  # files Write/Edit change from here on
        if outcome.additional_context:
            new.append(meta_user_message(outcome.additional_context))
        context = self.attachment_context(messages)
        new.extend(await get_attachment_messages(prompt, context, [*messages, *new]))
        return PreparedPrompt(new)

    async def turn_attachments(self, messages: Sequence[Message], _ctx: Any) -> list[Message]:
        """Attachments between turns (the loop's phase 7); prompts the user queued meanwhile
        reach the model here."""
        context = self.attachment_context(messages, queued=self.prompt_queue.drain())
        return list(await get_attachment_messages(None, context, messages))

    def attachment_context(
        self, messages: Sequence[Message], *, queued: Sequence[str] = ()
    ) -> AttachmentContext:
        """What the attachment providers read this turn."""
        mcp = self.mcp
        tasks, agents = self.tasks, self.agents
        return AttachmentContext(
            agent_types=(
                agents.current.listing if agents and "Agent" in self.builder.tool_names else {}
            ),
            task_notifications=tasks.drain_notifications(None) if tasks else (),
            cwd=self.params.tool_context.cwd,
            tool_context=self.params.tool_context,
            tools=self.builder.tool_names,
            deferred_tools=[t.name for t in self.deferred_tools],
            mcp_instructions=mcp.instructions() if mcp is not None else {},
            used_tokens=self.compactor.token_count(messages),
            context_window=self.compactor.config.context_window,
            warning_threshold=self.compactor.thresholds.warning,
            mcp_resource_resolver=self._read_resource if mcp is not None else None,
            queued_commands=queued,
            skills=self.skills.listing(),
        )

    async def _read_resource(self, server: str, uri: str) -> str:
        assert self.mcp is not None
        blocks = await self.mcp.read_resource(server, uri)
        return "\n".join(b.text for b in blocks if isinstance(b, TextBlock))

    # ---- compaction and accounting ------------------------------------------------------

    async def compact(
        self, messages: Sequence[Message], instructions: str | None
    ) -> CompactionResult | None:
        """Manual compaction (the CLI's /compact); None when there is nothing to compact."""
        if not any(m.type == "assistant" for m in messages):
            return None
        outcome = await self.hooks.pre_compact("manual", instructions or "")
        if outcome.blocked:
            return None
        extra = outcome.additional_context
        text = "\n\n".join(t for t in (instructions, extra) if t) or None
        self.summarizer.manual = True
        try:
            result = await self.compactor.compact(messages, text)
        finally:
            self.summarizer.manual = False
        return result

    def context_usage(self, messages: Sequence[Message]) -> dict[str, int]:
        """Token use by category for /context and the status line."""
        window = self.compactor.config.context_window
        system = _tokens_of_json(list(self.builder.build([], max_tokens=1).system))
        tools = _tokens_of_json(self.builder.build([], max_tokens=1).tools)
        memory = _tokens_of_text(self.user_context_text)
        if last_usage_index(messages) is not None:
            # The last response's usage counts the whole request: system, tools and all.
            total = self.compactor.token_count(messages)
            conversation = max(0, total - system - tools - memory)
        else:
            # No response since the history began (or was compacted): estimate the messages.
            conversation = self.compactor.token_count(messages) if messages else 0
        used = system + tools + memory + conversation
        return {
            "system": system,
            "tools": tools,
            "memory": memory,
            "messages": conversation,
            "free": max(0, window - used),
            "window": window,
            "autocompact": self.compactor.thresholds.autocompact,
        }

    async def aclose(self) -> None:
        """Stop MCP servers and close the transcript."""
        await self.exit_stack.aclose()
        self.session.close()


def _tokens_of_json(value: Any) -> int:
    return _tokens_of_text(json.dumps(value, ensure_ascii=False))


def _tokens_of_text(text: str) -> int:
    return (len(text) + 3) // 4
