"""A started session's assembled parts: `Runtime`, built once by `assembly.assemble` and
frozen, every part present. What is done with them lives with the doer: a prompt's
preparation in `prompts`, the session hooks, /clear, /compact and closing in
`started.Started`. The conversation itself — array, usage, cost, transcript, id — is
`runtime.session`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..agents.thread import ToolSet
from ..checkpoints import CheckpointStore
from ..compact import CompactionPipeline
from ..compact.autocompact import CompactionError, Summarize
from ..context import RequestBuilder
from ..context.facts import SessionFacts
from ..context.queue import PromptQueue
from ..context.user_context import MemoryFile
from ..hooks import HookRunner
from ..loop.deps import QueryParams
from ..messages.types import Message
from ..permissions import PermissionChecker
from ..providers.models import ModelInfo
from ..session import Session, Transcript
from ..session.timing import TimingRecorder
from ..skills.loader import SkillSet
from ..telemetry import Telemetry, ThreadTrace
from ..tools.base import Tool
from .attachments import SessionAttachments
from .hook_points import SettingsWatch
from .mcp_late import SessionMcp
from .options import AgentOptions

if TYPE_CHECKING:
    from ..agents import AgentCatalog
    from ..agents.wiring import SubagentParts
    from ..config.status_line import StatusLineSetting
    from ..tasks import TaskManager


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
        self.add(str(warning))  # `HookWarning` says it in words: "<event> hook '<label>' …"


@dataclass(frozen=True)
class Runtime:
    """A started session's parts, owned by one `Agent`; built once by `assembly.assemble`,
    each one there (no field is None), and never changed after (frozen). What changes
    during the session lives in the part that owns it: the conversation and its id in
    `session`, queued prompts in `prompt_queue` (the Agent's), notices in `notices`, tool
    state in the tool context."""

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
    """What `Started.aclose` stops (MCP servers, background tasks, the provider's client)."""
    settings_watch: SettingsWatch
    """The settings files read at the start; a change runs ConfigChange hooks."""
    mcp: SessionMcp
    """The session's MCP servers: how each is doing, reconnecting one, logging in to one, and
    which joined after the start (no servers: empty answers)."""
    facts: SessionFacts
    """What the session's prefix is built from (`context.facts`); a new transcript after
    /clear records them too."""
    memory: tuple[MemoryFile, ...]
    """The memory files the session started with, imports included (`SessionContext`)."""
    status_line: StatusLineSetting | None = None
    """The settings' `statusLine` command (a UI runs it: `cli.status_line`)."""

    # ---- derived ------------------------------------------------------------------------

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
