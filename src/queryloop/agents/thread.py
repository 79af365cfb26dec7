"""One thread's parts, the main thread's or a subagent's, made by the same builder from that
thread's options: `build_thread(ThreadOptions, ...) -> Thread`, and `Thread.query_params`
for the loop.

The main thread's options come from `AgentOptions` (`agent.assembly`); a subagent's from its
definition and the parent's `SubagentHost` (`agents.runner.child_options`). There is no second
way to make a request builder or the loop's parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from ..context.cache_ttl import CacheLifetime
from ..context.request import ToolSchemaCache, thread_request_builder
from ..context.user_context import PathRule
from ..loop.deps import AttachmentSource, Compactor, QueryParams
from ..tools.base import PermissionChecker, Tool, ToolContext, ToolHooks
from ..tools.deferred import DeferredSource

if TYPE_CHECKING:
    from ..context.cache_ttl import CacheTtlSetting
    from ..context.request import RequestBuilder
    from ..hooks import HookRunner
    from ..hooks.types import StopHook
    from ..loop.summaries import ToolUseSummarizer
    from ..providers.base import ModelProvider
    from ..tools.structured_output import StructuredOutputTool


@dataclass(frozen=True)
class ToolSet:
    """A thread's tools: sent with every request (`eager`) and behind ToolSearch
    (`deferred`)."""

    eager: tuple[Tool, ...]
    deferred: tuple[Tool, ...] = ()
    late: Callable[[], Sequence[Tool]] | None = None
    """The tools that joined while the session runs (MCP servers that connected after it
    started), asked for each time. They are sent once marked loaded, like a deferred tool
    ToolSearch found, at the end of the tools array (`tools.deferred`)."""

    @property
    def all(self) -> Sequence[Tool]:
        """Every tool the model may call, eager first (late ones as they are now)."""
        if self.late is None:
            return (*self.eager, *self.deferred)
        return _WithLate((*self.eager, *self.deferred), self.late)

    @property
    def deferred_source(self) -> DeferredSource:
        """The deferred tools as the request builder reads them: with the late ones."""
        if self.late is None:
            return self.deferred
        deferred, late = self.deferred, self.late
        return lambda: (*deferred, *late())


class _WithLate(Sequence[Tool]):
    """Fixed tools followed by the late ones of the moment (a call finds a tool that joined
    after the loop's parameters were made)."""

    def __init__(self, fixed: tuple[Tool, ...], late: Callable[[], Sequence[Tool]]) -> None:
        self._fixed = fixed
        self._late = late

    def _now(self) -> tuple[Tool, ...]:
        return (*self._fixed, *self._late())

    def __len__(self) -> int:
        return len(self._now())

    @overload
    def __getitem__(self, index: int) -> Tool: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Tool]: ...
    def __getitem__(self, index: int | slice) -> Tool | Sequence[Tool]:
        return self._now()[index]

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._now())


@dataclass(frozen=True)
class OutputLimits:
    """Output tokens per response: a capped default (`normal`: it reserves less of the
    window), escalated to the model's maximum (`ceiling`) only when a reply is cut off."""

    normal: int
    ceiling: int


@dataclass(frozen=True)
class ThreadOptions:
    """What a thread's requests are made of."""

    model: str
    """The thread's model: its request builder keeps it (the one place)."""
    instructions: str | None
    """The static part of the system prompt (None: queryloop's own)."""
    environment: str
    """The environment part of the system prompt (cwd, platform, git)."""
    tools: ToolSet
    user_context: Mapping[str, str]
    """Memory files and the like (QUERYLOOP.md, AGENTS.md)."""
    limits: OutputLimits
    append: str | None = None
    """Text appended to the system prompt."""
    thinking: Mapping[str, Any] | None = None
    schemas: ToolSchemaCache = field(default_factory=ToolSchemaCache)
    """The cache the thread's request builder serializes its tool definitions into (the
    bytes every request of the thread sends)."""
    parent_schemas: ToolSchemaCache | None = None
    """A subagent's: its parent's cache, whose bytes its tools are sent with instead of
    rendering every schema again (that took ~0.1 s per subagent)."""
    cache_ttl: CacheTtlSetting = "5m"
    """How long the thread's prompt-cache entries live (`context.cache_ttl`); each thread
    measures its own gaps for "auto"."""
    last_request_at: float | None = None
    """When the thread's previous request started (a resumed session's last one), for "auto"."""
    nested_memory: bool = True
    """Announce subfolders' memory files as the thread touches them (off when the session
    reads no project files)."""
    path_rules: tuple[PathRule, ...] = ()
    """Rule files with `paths:` (`.claude/rules/`), attached when the thread works with a
    file they match."""


@dataclass(frozen=True)
class Thread:
    """The parts one thread runs on (see the module docstring)."""

    provider: ModelProvider
    """Metered into the session as the thread's requests (main, or a subagent's side)."""
    builder: RequestBuilder
    tools: ToolSet
    permission: PermissionChecker | None
    hooks: HookRunner | None
    tool_context: ToolContext
    limits: OutputLimits

    def query_params(
        self,
        *,
        tool_hooks: ToolHooks | None,
        stop_hooks: Sequence[StopHook],
        attachments: AttachmentSource,
        max_turns: int | None,
        session_id: str,
        fallback_model: str | None = None,
        compactor: Compactor | None = None,
        token_budget: int | None = None,
        tool_use_summarizer: ToolUseSummarizer | None = None,
        task_events: Callable[[], Sequence[Any]] | None = None,
        output_tool: StructuredOutputTool | None = None,
    ) -> QueryParams:
        """What each `query()` of this thread runs with (`output_tool`: the main thread's,
        one of its tools, when the Agent has an `output_type`)."""
        return QueryParams(
            provider=self.provider,
            request_builder=self.builder,
            tool_context=self.tool_context,
            tools=self.tools.all,
            max_output_tokens=self.limits.normal,
            max_output_tokens_ceiling=self.limits.ceiling,
            fallback_model=fallback_model,
            permission=self.permission,
            tool_hooks=tool_hooks,
            stop_hooks=stop_hooks,
            loop_hooks=self.hooks,
            compactor=compactor,
            attachments=attachments,
            max_turns=max_turns,
            token_budget=token_budget,
            session_id=session_id,
            tool_use_summarizer=tool_use_summarizer,
            task_events=task_events,
            output_tool=output_tool,
        )


def build_thread(
    options: ThreadOptions,
    *,
    provider: ModelProvider,
    permission: PermissionChecker | None,
    hooks: HookRunner | None,
    tool_context: ToolContext,
) -> Thread:
    """A thread from its options: its request builder (system prompt, tools, user context)
    and the provider, permission checker, hooks and tool state it runs with."""
    eager, parent = options.tools.eager, options.parent_schemas
    sent = [parent.schema(t) for t in eager] if parent is not None else eager
    builder = thread_request_builder(
        model=options.model,
        instructions=options.instructions,
        environment=options.environment,
        append=options.append,
        tools=sent,
        deferred=options.tools.deferred_source,
        user_context=options.user_context,
        thinking=options.thinking,
        tool_context=tool_context,
        schemas=options.schemas,
        cache_ttl=CacheLifetime(options.cache_ttl, last_request_at=options.last_request_at),
    )
    return Thread(provider, builder, options.tools, permission, hooks, tool_context, options.limits)
