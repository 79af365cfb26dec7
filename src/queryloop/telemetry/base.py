"""The tracing seams with nothing behind them: what a session uses when tracing is off.

`Telemetry` (one per session) and `ThreadTrace` (one per thread: the main conversation and
each subagent) are no-ops here; `queryloop.telemetry.spans` overrides them with the real
spans. Keeping the off path in its own module means a session that does not trace never
imports OpenTelemetry at all (see `create_telemetry`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractContextManager, nullcontext

from ..hooks.config import Hook
from ..hooks.events import HookEvent
from ..hooks.shell import HookRun
from ..loop.events import CompactionEvent, LoopEvent
from ..messages.blocks import ToolUseBlock
from ..messages.types import Message
from ..providers.base import ModelProvider
from ..tasks.events import TaskEvent
from ..tools.base import DenialSource


def _ignore_run(_run: HookRun) -> None:
    return None


class ThreadTrace:
    """One thread's spans: an `invoke_agent` span per prompt, `chat` spans per model
    request, `execute_tool` spans per tool call (it is the thread's `ToolObserver` too)."""

    enabled = False

    def run(
        self, events: AsyncIterator[LoopEvent], *, prompt: str | None = None
    ) -> AsyncIterator[LoopEvent]:
        """`events` (one prompt's loop events) unchanged, inside the turn's span. Here, with
        nothing traced, `events` itself: not even a generator layer is added."""
        return events

    def tool_started(self, block: ToolUseBlock) -> None:
        """A tool call began (called in the task that runs it)."""

    def tool_finished(
        self,
        block: ToolUseBlock,
        results: Sequence[Message],
        *,
        permission: DenialSource | None = None,
    ) -> None:
        """A tool call is done, refused, interrupted or never ran; `permission`: who
        allowed it."""

    def compaction(self) -> AbstractContextManager[Callable[[CompactionEvent | None], None]]:
        """A span around a compaction that happens outside the loop (`/compact`); the
        callable records what it did (None: nothing was compacted)."""
        return nullcontext(lambda _event: None)


class Telemetry:
    """A session's tracing: makes each thread's `ThreadTrace`, observes hook runs and
    background tasks. This base traces nothing."""

    enabled = False

    def thread(
        self, *, agent_name: str, model: str, agent_id: str | None = None, description: str = ""
    ) -> ThreadTrace:
        """The trace of one thread (`agent_name`: `queryloop` for the main one, the agent
        type for a subagent)."""
        return ThreadTrace()

    def hook_started(self, event: HookEvent, hook: Hook) -> Callable[[HookRun], None]:
        """A hook handler began (in the task that runs it); call the result with its run."""
        return _ignore_run

    def side_requests(self, provider: ModelProvider, purpose: str) -> ModelProvider:
        """`provider` for requests made beside the loop (compaction and tool-use
        summaries, prompt hooks): traced, a `chat` span each, when the session traces."""
        return provider

    def task_event(self, event: TaskEvent) -> None:
        """A background task started or finished (a `TaskManager` listener)."""

    def flush(self) -> None:
        """Export what is buffered now (the provider's `force_flush`, when it has one)."""
