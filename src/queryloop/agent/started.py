"""The two states of an Agent's session: `Unstarted` (only the options and the
conversation exist: what the Agent can tell from them) and `Started` (the assembled
`Runtime`, whose parts are all there). The Agent holds one of them (`AgentState`) and asks
it, so no question branches on whether the session started; `Unstarted.start` is the one
way from the first to the second, and `Started.aclose` the way back."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agents.wiring import interrupted_subagent_notes
from ..checkpoints import Checkpoint, checkpoint_folder
from ..compact.autocompact import CompactionResult
from ..compact.tokens import last_usage_index
from ..context.memory_imports import ImportPolicy
from ..context.queue import PromptQueue
from ..hooks import HookEvent
from ..messages.constructors import meta_user_message
from ..messages.types import Message
from ..permissions.rules import RuleSet
from ..session import LoadedSession, Session, Transcript, new_session_id, queryloop_home
from ..session.store import project_key
from ..session.stores import TranscriptRef
from .assembly import assemble, build_session_dir
from .hook_points import memory_loaded
from .options import AgentOptions
from .prompts import end_prompt
from .runtime import Runtime

if TYPE_CHECKING:
    from ..agents.definitions import AgentDefinition
    from ..config.status_line import StatusLineSetting
    from ..skills import Skill
    from ..tasks import TaskManager
    from ..tools.mcp import McpServerStatus
    from ..tools.mcp_login import LoginResult


class Unstarted:
    """A session not started yet (or closed): its options, its conversation and the stored
    session it resumes, if any. Every question is answered from those."""

    runtime: None = None

    def __init__(
        self, options: AgentOptions, session: Session, resumed: LoadedSession | None
    ) -> None:
        self.options = options
        self.session = session
        self.resumed = resumed
        """The stored session this one continues (None: a new one)."""

    async def start(self, prompt_queue: PromptQueue) -> Started:
        """Assemble the session's parts and run its SessionStart hooks."""
        runtime = await assemble(
            self.options, self.session, prompt_queue=prompt_queue, resumed=self.resumed
        )
        started = Started(runtime, self)
        await started.on_session_start()
        return started

    @property
    def notices(self) -> list[str]:
        return []

    @property
    def tasks(self) -> TaskManager | None:
        return None

    @property
    def mcp_status(self) -> dict[str, McpServerStatus]:
        return {}

    @property
    def model(self) -> str:
        return self.options.model.model or ""

    @property
    def tool_names(self) -> list[str]:
        return []

    @property
    def agents(self) -> list[AgentDefinition]:
        return []

    @property
    def status_line(self) -> StatusLineSetting | None:
        return None

    @property
    def hook_transcript_path(self) -> str:
        return ""

    @property
    def permission_rules(self) -> RuleSet:
        return RuleSet()

    @property
    def permission_mode(self) -> str:
        return str(self.options.permissions.permission_mode or "default")

    @property
    def skills(self) -> dict[str, str]:
        return {}

    @property
    def slash_commands(self) -> dict[str, Skill]:
        return {}

    @property
    def home(self) -> Path:
        return queryloop_home(self.options.session.home)

    @property
    def memory_imports(self) -> ImportPolicy | None:
        return None

    def checkpoints(self) -> list[Checkpoint]:
        """A resumed session's checkpoints, read from its folder."""
        if self.resumed is None or self.resumed.ref is None:
            return []
        from ..checkpoints.session import store_for_transcript

        return store_for_transcript(self.resumed.ref, self.home).checkpoints()

    def context_usage(self, messages: Sequence[Message]) -> dict[str, int]:
        return {}

    def end_prompt(self) -> None:
        """Nothing was granted."""

    def abort(self) -> None:
        """Nothing runs."""

    def clear(self) -> None:
        """A fresh conversation; it gets its transcript when the session starts."""
        self.session.clear(new_session_id(), None)

    async def aclear(self) -> None:
        """No hooks run before the session started."""
        self.clear()

    async def notification(self, message: str, kind: str, title: str | None) -> None:
        """No hooks run before the session started."""

    async def aclose(self, reason: str) -> Unstarted:
        """Nothing to close."""
        return self


class Started:
    """A started session: its parts (`runtime`), and what the Agent does with them besides
    running the loop (session hooks, /clear, /compact, /context, closing)."""

    def __init__(self, runtime: Runtime, unstarted: Unstarted) -> None:
        self.runtime = runtime
        self._unstarted = unstarted
        """What the session was before it started, and becomes when it closes."""

    @property
    def notices(self) -> list[str]:
        return self.runtime.notices.items

    @property
    def tasks(self) -> TaskManager | None:
        return self.runtime.tasks

    @property
    def mcp_status(self) -> dict[str, McpServerStatus]:
        return self.runtime.mcp.statuses()

    async def mcp_reconnect(self, name: str) -> McpServerStatus:
        """Connect MCP server `name` afresh; a server that joins brings its tools."""
        return await self.runtime.mcp.reconnect(name, self.runtime.params.tool_context)

    async def mcp_login(self, name: str, show: Callable[[str], Awaitable[None]]) -> LoginResult:
        """Log in to MCP server `name`, then reconnect it in the session."""
        return await self.runtime.mcp.login(name, show, self.runtime.params.tool_context)

    @property
    def model(self) -> str:
        return self.runtime.model

    @property
    def tool_names(self) -> list[str]:
        return [tool.name for tool in self.runtime.params.tools]

    @property
    def agents(self) -> list[AgentDefinition]:
        return list(self.runtime.agents.current.definitions)

    @property
    def status_line(self) -> StatusLineSetting | None:
        return self.runtime.status_line

    @property
    def hook_transcript_path(self) -> str:
        return self.runtime.hooks.transcript_path

    @property
    def permission_rules(self) -> RuleSet:
        context = self.runtime.permission.context
        return context.rules.merged(RuleSet(allow=tuple(context.session_allow)))

    @property
    def permission_mode(self) -> str:
        return self.runtime.permission.context.mode.value

    @property
    def skills(self) -> dict[str, str]:
        return {name: s.description for name, s in sorted(self.runtime.skills.skills.items())}

    @property
    def slash_commands(self) -> dict[str, Skill]:
        return self.runtime.skills.menu()

    @property
    def home(self) -> Path:
        return self.runtime.home

    @property
    def memory_imports(self) -> ImportPolicy | None:
        return self.runtime.attachments.memory_imports

    def checkpoints(self) -> list[Checkpoint]:
        return self.runtime.checkpoints.checkpoints()

    def end_prompt(self) -> None:
        """A skill's allowed-tools end with the prompt."""
        end_prompt(self.runtime)

    def abort(self) -> None:
        """Stop the current turn as soon as it safely can."""
        self.runtime.params.tool_context.abort.abort("user")

    async def notification(self, message: str, kind: str, title: str | None) -> None:
        """Run Notification hooks."""
        await self.runtime.hooks.notification(message, kind, title)

    async def on_session_start(self, source: str | None = None) -> None:
        """Run SessionStart hooks (when the Agent starts the session, `startup` or `resume`;
        after /clear, `clear`); their context becomes a meta message."""
        runtime, session = self.runtime, self.runtime.session
        resumed = bool(session.messages)
        source = source or ("resume" if resumed else "startup")
        outcome = await runtime.hooks.session_start(source, runtime.model)
        if runtime.hooks.has_hooks(HookEvent.INSTRUCTIONS_LOADED):
            await memory_loaded(runtime.hooks, runtime.memory, "session_start")
        if resumed:  # after a crash: which subagents were cut off, and how to resume them
            ref = session.transcript.ref if session.transcript else None
            for note in interrupted_subagent_notes(ref, session.messages):
                session.append(note)
        if outcome.additional_context:
            session.append(meta_user_message(outcome.additional_context))

    def clear(self) -> None:
        """Switch to a fresh session id and transcript (after /clear)."""
        runtime = self.runtime
        options, session_id = runtime.options, new_session_id()
        if not options.session.persist:
            runtime.session.clear(session_id, None)
            return
        cwd = options.workspace.cwd
        old = runtime.session.transcript
        if old is None:  # not persisted: the fresh session is not either
            runtime.session.clear(session_id, None)
            return
        ref = TranscriptRef.of(old.ref.store, project_key(cwd), session_id)
        transcript = Transcript(ref, session_id)
        transcript.start(model=runtime.model, cwd=str(cwd), context=runtime.facts.to_dict())
        runtime.session.clear(session_id, transcript)
        folder = build_session_dir(transcript, runtime.home)
        assert folder is not None  # it has a transcript
        runtime.checkpoints.switch(checkpoint_folder(folder))

    async def aclear(self) -> None:
        """`clear()` with SessionEnd (reason `clear`) before and SessionStart (source
        `clear`) after."""
        await self.runtime.hooks.session_end("clear")
        self.clear()
        await self.on_session_start("clear")

    async def compact(
        self, messages: Sequence[Message], instructions: str | None
    ) -> CompactionResult | None:
        """Manual compaction (the CLI's /compact); None when there is nothing to compact."""
        if not any(m.type == "assistant" for m in messages):
            return None
        runtime = self.runtime
        outcome = await runtime.hooks.pre_compact("manual", instructions or "")
        if outcome.blocked:
            return None
        extra = outcome.additional_context
        text = "\n\n".join(t for t in (instructions, extra) if t) or None
        with runtime.summarizer.manual():
            return await runtime.compactor.compact(messages, text)

    def context_usage(self, messages: Sequence[Message]) -> dict[str, int]:
        """Token use by category for /context and the status line."""
        compactor = self.runtime.compactor
        window = compactor.config.context_window
        system_blocks, tool_schemas = self.runtime.builder.prefix()
        system, tools = _tokens_of_json(system_blocks), _tokens_of_json(tool_schemas)
        memory = _tokens_of_text("\n".join(self.runtime.facts.user_context().values()))
        if last_usage_index(messages) is not None:
            # The last response's usage counts the whole request: system, tools and all.
            total = compactor.token_count(messages)
            conversation = max(0, total - system - tools - memory)
        else:
            # No response since the history began (or was compacted): estimate the messages.
            conversation = compactor.token_count(messages) if messages else 0
        used = system + tools + memory + conversation
        return {
            "system": system,
            "tools": tools,
            "memory": memory,
            "messages": conversation,
            "free": max(0, window - used),
            "window": window,
            "autocompact": compactor.thresholds.autocompact,
        }

    async def aclose(self, reason: str) -> Unstarted:
        """Run SessionEnd hooks (`reason`), stop background hooks, MCP servers and tasks,
        and close the transcript; the session is unstarted again."""
        runtime = self.runtime
        try:
            await runtime.hooks.session_end(reason)
        finally:
            await runtime.hooks.aclose()
            await runtime.exit_stack.aclose()
            runtime.session.close()
        return self._unstarted


AgentState = Unstarted | Started
"""What an Agent's session is: not started (or closed), or started."""


def _tokens_of_json(value: Any) -> int:
    return _tokens_of_text(json.dumps(value, ensure_ascii=False))


def _tokens_of_text(text: str) -> int:
    return (len(text) + 3) // 4
