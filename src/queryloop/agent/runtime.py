"""A live session's assembled parts an `Agent` drives (prepare a prompt, compact, measure the
context): `Runtime`, frozen once `assembly.assemble` has built it. The conversation itself —
array, usage, cost, transcript, id — is `runtime.session`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agents.thread import ToolSet
from ..agents.wiring import interrupted_subagent_notes
from ..checkpoints import CheckpointStore, checkpoint_folder
from ..compact import CompactionPipeline
from ..compact.autocompact import CompactionError, CompactionResult, Summarize
from ..compact.tokens import last_usage_index
from ..context import RequestBuilder
from ..context.facts import SessionFacts
from ..context.queue import PromptQueue
from ..context.user_context import MemoryFile
from ..hooks import HookEvent, HookOutcome, HookRunner
from ..loop.deps import QueryParams
from ..messages.constructors import meta_user_message, user_message
from ..messages.types import Message
from ..permissions import PermissionChecker
from ..providers.models import ModelInfo, model_for
from ..session import Session, Transcript, new_session_id, session_path
from ..session.timing import TimingRecorder
from ..skills.commands import (
    Invocation,
    InvokedMessages,
    invocation_messages,
    parse_invocation,
)
from ..skills.loader import SkillSet, SkillSource
from ..skills.shell import ThreadShell
from ..telemetry import Telemetry, ThreadTrace
from ..tools.base import Tool
from .attachments import SessionAttachments
from .hook_points import SettingsWatch, memory_loaded
from .options import AgentOptions

if TYPE_CHECKING:
    from ..agents import AgentCatalog
    from ..agents.wiring import SubagentParts
    from ..tasks import TaskManager
    from ..tools.mcp import McpManager


class HookedSummarizer:
    """Runs PreCompact hooks before an automatic compaction's summary (a block skips it, as
    a failed compaction); a manual /compact (inside `manual()`) runs them itself, with its
    instructions. Hook output extends the summary instructions; PostCompact hooks get the
    summary."""

    def __init__(self, inner: Summarize, hooks: HookRunner) -> None:
        self.inner = inner
        self.hooks = hooks
        self._manual = False

    @contextmanager
    def manual(self) -> Iterator[None]:
        """The summaries asked for meanwhile belong to a manual /compact (hooks already ran)."""
        self._manual = True
        try:
            yield
        finally:
            self._manual = False

    async def __call__(self, messages: Sequence[Message], instruction: str) -> str:
        if not self._manual:
            outcome = await self.hooks.pre_compact("auto")
            if outcome.blocked:  # Claude Code skips it; a reactive one lets the error surface
                raise CompactionError(f"a PreCompact hook blocked the compaction: {outcome.reason}")
            if outcome.additional_context:
                instruction = f"{instruction}\n\n{outcome.additional_context}"
        summary = await self.inner(messages, instruction)
        await self.hooks.post_compact("manual" if self._manual else "auto", summary)
        return summary


@dataclass
class PreparedPrompt:
    """The messages a prompt adds before the loop runs, or why a hook blocked it."""

    messages: list[Message]
    blocked: str | None = None
    model: str | None = None
    """The model of this prompt when a command asks for one (its `model`), else None."""


class Notices:
    """The notices for the user (ignored settings, failed MCP servers, hook warnings...):
    kept in order and passed to `on_notice` as they come. One per session, its only writer."""

    def __init__(self, on_notice: Callable[[str], None] | None = None) -> None:
        self._items: list[str] = []
        self._on_notice = on_notice

    @property
    def items(self) -> list[str]:
        """The notices so far, oldest first (a copy)."""
        return list(self._items)

    def add(self, text: str) -> None:
        """Record a notice and pass it to `on_notice`."""
        self._items.append(text)
        if self._on_notice is not None:
            self._on_notice(text)

    def hook_warning(self, warning: object) -> None:
        """A hook's warning (`HookRunner(on_warning=...)`)."""
        self.add(f"hook warning: {warning}")


@dataclass(frozen=True)
class Runtime:
    """A live session's parts, owned by one `Agent`; built once by `assembly.assemble`
    and never changed after (frozen). What changes during the session lives in the part
    that owns it: the conversation and its id in `session`, queued prompts in
    `prompt_queue` (the Agent's), notices in `notices`, tool state in the tool context."""

    options: AgentOptions
    home: Path
    model_info: ModelInfo
    params: QueryParams
    builder: RequestBuilder
    """Builds every request; `builder.model` is the session's model (the one place)."""
    compactor: CompactionPipeline
    summarizer: HookedSummarizer
    hooks: HookRunner
    permission: PermissionChecker
    """The session's permission checker (its context holds the mode and the rules)."""
    session: Session
    """The one owner of the array, usage, cost, transcript and session id."""
    tools: ToolSet
    attachments: SessionAttachments
    subagents: SubagentParts
    """Subagent types (re-read at each prompt), background tasks, the subagent host."""
    skills: SkillSet
    checkpoints: CheckpointStore
    notices: Notices
    timing: TimingRecorder
    """Timing records for the session report: loop events (the Agent) and tool calls."""
    telemetry: Telemetry
    """The session's traces (no-op when nothing traces): hooks, background tasks, threads."""
    trace: ThreadTrace
    """The main thread's spans: the Agent runs each prompt inside it (`ThreadTrace.run`)."""
    exit_stack: AsyncExitStack
    """What `aclose` stops (MCP servers, background tasks, the provider's client)."""
    settings_watch: SettingsWatch | None = None
    """The settings files read at the start; a change runs ConfigChange hooks."""
    mcp: McpManager | None = None
    facts: SessionFacts | None = None
    """What the session's prefix is built from (`context.facts`); a new transcript after
    /clear records them too."""
    memory: tuple[MemoryFile, ...] = ()
    """The memory files the session started with, imports included (`SessionContext`)."""

    def notify(self, text: str) -> None:
        """Record a notice for the user and pass it to `on_notice`."""
        self.notices.add(text)

    # ---- the session --------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The session's id (a new one after /clear)."""
        return self.session.session_id

    @property
    def model(self) -> str:
        """The session's model (the request builder's)."""
        return self.builder.model

    @property
    def transcript(self) -> Transcript | None:
        """The session's transcript writer (None when not persisted)."""
        return self.session.transcript

    @property
    def tasks(self) -> TaskManager:
        """The session's background tasks."""
        return self.subagents.tasks

    @property
    def agents(self) -> AgentCatalog:
        """The subagent types of this session."""
        return self.subagents.catalog

    @property
    def deferred_tools(self) -> Sequence[Tool]:
        """The tools behind ToolSearch."""
        return self.tools.deferred

    @property
    def prompt_queue(self) -> PromptQueue:
        """Prompts queued while a turn runs (the Agent's queue; drained between turns)."""
        return self.attachments.prompt_queue

    def new_session(self) -> str:
        """Switch to a fresh session id and transcript (after /clear)."""
        session_id = new_session_id()
        transcript = None
        if self.options.persist:
            path = session_path(session_id, self.options.cwd, self.home)
            transcript = Transcript(path, session_id, fsync=False)
            facts = {"context": self.facts.to_dict()} if self.facts is not None else {}
            transcript.start(model=self.model, cwd=str(self.options.cwd), **facts)
        self.session.clear(session_id, transcript)
        if self.options.persist:
            self.checkpoints.switch(checkpoint_folder(path.parent / session_id))
        return session_id

    # ---- prompts ------------------------------------------------------------------------

    async def on_session_start(self, source: str | None = None) -> None:
        """Run SessionStart hooks (when the Agent starts the session, `startup` or `resume`;
        after /clear, `clear`); their context becomes a meta message."""
        resumed = bool(self.session.messages)
        source = source or ("resume" if resumed else "startup")
        outcome = await self.hooks.session_start(source, self.model)
        if self.hooks.has_hooks(HookEvent.INSTRUCTIONS_LOADED):
            await memory_loaded(self.hooks, self.memory, "session_start")
        if resumed:  # after a crash: which subagents were cut off, and how to resume them
            folder = self.params.tool_context.session_dir
            for note in interrupted_subagent_notes(folder, self.session.messages):
                self.session.append(note)
        if outcome.additional_context:
            self.session.append(meta_user_message(outcome.additional_context))

    async def prepare_prompt(self, prompt: str, messages: Sequence[Message]) -> PreparedPrompt:
        """The user's message, its attachments (@-mentions first), UserPromptSubmit hooks."""
        await self._config_changes()
        outcome = await self.hooks.user_prompt_submit(prompt)
        if outcome.blocked or outcome.stop_reason:
            return PreparedPrompt([], blocked=outcome.reason or outcome.stop_reason or "blocked")
        invocation = parse_invocation(prompt, self.skills)
        expansion = await self._expansion_hooks(prompt, invocation)
        if expansion.blocked or expansion.stop_reason:
            return PreparedPrompt(
                [], blocked=expansion.reason or expansion.stop_reason or "blocked"
            )
        self.agents.refresh()  # agent files added or removed since: the delta says so
        self.end_prompt()  # a new message: the last prompt's skill grants are over
        new: list[Message] = [user_message(prompt)]
        self.checkpoints.begin(new[0].uuid, prompt)  # files Write/Edit change from here on
        references = prompt
        if invocation is not None:  # /<name> [args]: the skill's text after the prompt
            invoked = await self._invoke(invocation)
            new.extend(invoked.messages)
            references = f"{prompt}\n{invoked.references}"
        for context in (outcome.additional_context, expansion.additional_context):
            if context:
                new.append(meta_user_message(context))
        new.extend(await self.attachments.prompt(references, messages, new))
        return PreparedPrompt(new, model=self._prompt_model(invocation))

    async def _expansion_hooks(self, prompt: str, invocation: Invocation | None) -> HookOutcome:
        """UserPromptExpansion hooks for a typed `/name args`, before its text expands and
        its `!` lines run (Claude Code's event; the matcher filters the command's name)."""
        if invocation is None or not self.hooks.has_hooks(HookEvent.USER_PROMPT_EXPANSION):
            return HookOutcome()
        skill = invocation.skill
        source = "plugin" if skill.source is SkillSource.PLUGIN else "skill"
        return await self.hooks.user_prompt_expansion(prompt, skill.name, invocation.args, source)

    async def _invoke(self, invocation: Invocation) -> InvokedMessages:
        """The messages a typed `/<name>` adds: its `allowed-tools` are granted for the
        prompt, then its `!` commands run as the main thread's Bash calls (rules, grant,
        hooks, sandbox); files a Read deny rule covers are not inlined."""
        ctx = self.params.tool_context
        ctx.grants.grant(invocation.skill.name, invocation.skill.options.allowed_tools)
        shell = ThreadShell(self.tools.all, ctx, self.permission, self.params.tool_hooks)
        return await invocation_messages(
            invocation,
            shell,
            denials=lambda: list(shell.denials),
            read_denied=lambda path: self.permission.denies_read(ctx.resolve(path), ctx),
            session_id=self.session.session_id,
        )

    def _prompt_model(self, invocation: Invocation | None) -> str | None:
        """A command's `model` for its prompt (an alias resolved as for subagents)."""
        requested = invocation.skill.options.model if invocation is not None else None
        if requested is None:
            return None
        return model_for(requested, self.model, getattr(self.params.provider, "name", ""))

    def end_prompt(self) -> None:
        """The prompt's run is over: the grants of the skills it invoked end with it (Claude
        Code: the `allowed-tools` grant "clears when you send your next message")."""
        self.params.tool_context.grants.clear()

    async def _config_changes(self) -> None:
        """ConfigChange hooks for settings files changed since the last prompt (they apply
        from the next session; a block is noted)."""
        if self.settings_watch is None or not self.hooks.has_hooks(HookEvent.CONFIG_CHANGE):
            return
        for source, path in self.settings_watch.changed():
            if await self.hooks.config_change(source, str(path)):
                self.notify(f"a ConfigChange hook blocked the change to {path}")

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
        with self.summarizer.manual():
            return await self.compactor.compact(messages, text)

    def context_usage(self, messages: Sequence[Message]) -> dict[str, int]:
        """Token use by category for /context and the status line."""
        window = self.compactor.config.context_window
        system_blocks, tool_schemas = self.builder.prefix()
        system, tools = _tokens_of_json(system_blocks), _tokens_of_json(tool_schemas)
        context = self.facts.user_context() if self.facts is not None else {}
        memory = _tokens_of_text("\n".join(context.values()))
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

    async def aclose(self, reason: str = "other") -> None:
        """Run SessionEnd hooks (`reason`), stop background hooks, MCP servers and tasks,
        and close the transcript."""
        try:
            await self.hooks.session_end(reason)
        finally:
            await self.hooks.aclose()
            await self.exit_stack.aclose()
            self.session.close()


def _tokens_of_json(value: Any) -> int:
    return _tokens_of_text(json.dumps(value, ensure_ascii=False))


def _tokens_of_text(text: str) -> int:
    return (len(text) + 3) // 4
