"""The streaming tool executor and the non-streaming batch path.

While the model is still streaming, the loop hands each complete tool_use block to
`StreamingToolExecutor.add_tool`, which starts it at once when the scheduling rule allows:

- concurrency-safe calls run in parallel, at most `max_concurrency` at a time;
- a call that is not concurrency-safe waits until every running call has finished and then
  runs alone; calls queued behind it wait for it (calls start strictly in tool_use order).

Results come out in tool_use order; progress messages come out as soon as they exist. A
failing call of a tool with `cancels_siblings_on_error` (Bash) cancels every other unfinished
call of the round, which get "Cancelled: a parallel Bash command failed" results. When
`ctx.abort` fires, running calls are cancelled (Bash kills its process group) and every
unfinished call gets an is_error result saying the user interrupted it.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from ..messages.blocks import ToolResultBlock, ToolUseBlock
from ..messages.constructors import interrupted_result_message
from ..messages.interruption import Interruption
from ..messages.types import Message, ProgressMessage, UserMessage
from .base import PermissionChecker, Tool, ToolContext, ToolHooks
from .execution import CallOutcome, error_result_message, find_tool, run_tool_call

DEFAULT_MAX_CONCURRENCY = 10
SIBLING_CANCELLED = "Cancelled: a parallel {tool} command failed"


class CallStatus(StrEnum):
    """Where a tracked call is in its life."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    YIELDED = "yielded"


@dataclass(eq=False)  # identity semantics: calls live in sets
class _Call:
    block: ToolUseBlock
    safe: bool
    status: CallStatus = CallStatus.QUEUED
    task: asyncio.Task[None] | None = None
    results: list[Message] = field(default_factory=list)
    outcome: CallOutcome = field(default_factory=CallOutcome)


def is_call_concurrency_safe(block: ToolUseBlock, tools: Sequence[Tool]) -> bool:
    """Whether a call may run alongside others.

    An unknown tool or unparsable input is safe: such a call only produces an error result.
    A tool whose `is_concurrency_safe` raises is treated as unsafe.
    """
    tool = find_tool(tools, block.name)
    if tool is None:
        return True
    try:
        parsed = tool.input_model.model_validate(dict(block.input))
    except Exception:
        return True
    try:
        return bool(tool.is_concurrency_safe(parsed))
    except Exception:
        return False


def _is_result(message: Message) -> bool:
    if not isinstance(message, UserMessage) or isinstance(message.content, str):
        return False
    return any(isinstance(b, ToolResultBlock) for b in message.content)


def _aborted(call: _Call) -> Message:
    """The stand-in result of a call the abort stopped or never started."""
    return interrupted_result_message(call.block.id, Interruption.TOOLS_ABORTED, call.block.name)


def _cancels_siblings(outcome: CallOutcome) -> bool:
    return outcome.is_error and bool(getattr(outcome.tool, "cancels_siblings_on_error", False))


class StreamingToolExecutor:
    """Runs tool calls as they arrive; see the module docstring for the rules."""

    def __init__(
        self,
        tools: Sequence[Tool],
        ctx: ToolContext,
        *,
        permission: PermissionChecker | None = None,
        hooks: ToolHooks | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self._tools = tuple(tools)
        self._ctx = ctx
        self._permission = permission
        self._hooks = hooks
        self._max = max_concurrency
        self._calls: list[_Call] = []
        self._running: set[_Call] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._progress: list[Message] = []
        self._next_start = 0
        """Index of the first call that may still be queued (calls start in order)."""
        self._next_yield = 0
        """Index of the first call whose result has not been handed out."""
        self._changed = asyncio.Event()
        self._abort_watch: asyncio.Task[None] | None = None
        self._sibling_error: str | None = None
        self._discarded = False
        self.discard_reason: str | None = None
        self.aborted = False
        """True once the abort signal cancelled this round's calls."""
        self.stop_reason: str | None = None
        """Set when a hook asked to stop the loop after this round."""
        self.timings: dict[str, tuple[float, float | None]] = {}
        """tool_use_id -> (start, end) in `time.monotonic()` seconds; end None while running."""

    # -- the loop's API ----------------------------------------------------------------

    def add_tool(self, block: ToolUseBlock) -> None:
        """Track a complete tool_use block and start it now if the rules allow."""
        if self._discarded:
            return
        call = _Call(block=block, safe=is_call_concurrency_safe(block, self._tools))
        self._calls.append(call)
        if self._ctx.abort.aborted or self.aborted:
            self._finish_unrun(call, _aborted(call))
            self.aborted = True
        elif self._sibling_error is not None:
            self._finish_unrun(call, error_result_message(call.block.id, self._sibling_error))
        else:
            self._ensure_abort_watch()
            self._schedule()

    def get_completed_results(self) -> list[Message]:
        """Messages ready now (never blocks): all new progress, and results in call order."""
        if self._discarded:
            return []
        ready, self._progress = self._progress, []
        while self._next_yield < len(self._calls):
            call = self._calls[self._next_yield]
            if call.status is not CallStatus.DONE:
                break
            ready.extend(call.results)
            call.status = CallStatus.YIELDED
            self._next_yield += 1
        return ready

    async def get_remaining_results(self) -> AsyncIterator[Message]:
        """After the stream ended: wait for every call and yield the rest, in order.

        If the consumer stops early (it was cancelled, or closed this generator), the calls
        still running are cancelled: tools never outlive the loop that started them.
        """
        try:
            while not self._discarded:
                self._changed.clear()
                for message in self.get_completed_results():
                    yield message
                if self._next_yield == len(self._calls):
                    break
                await self._changed.wait()
        finally:
            self._cancel_tasks()
            self._stop_abort_watch()
        await self._drain()

    def discard(self, reason: str) -> None:
        """The stream failed or fell back: cancel everything; nothing more is yielded."""
        self._discarded = True
        self.discard_reason = reason
        self._cancel_tasks()
        self._stop_abort_watch()
        self._changed.set()

    @property
    def has_unfinished(self) -> bool:
        """True while some call has not produced its result yet."""
        waiting = itertools.islice(self._calls, self._next_start, None)
        return bool(self._running) or any(c.status is CallStatus.QUEUED for c in waiting)

    def _cancel_tasks(self) -> None:
        for task in self._tasks:
            task.cancel()

    async def _drain(self) -> None:
        """Wait for cancelled calls to unwind (Bash reaps its killed process group)."""
        if self._tasks:
            await asyncio.wait(set(self._tasks))

    # -- scheduling --------------------------------------------------------------------

    def _can_start(self, call: _Call) -> bool:
        if not self._running:
            return True
        return call.safe and len(self._running) < self._max and all(r.safe for r in self._running)

    def _schedule(self) -> None:
        """Start queued calls in tool_use order until one has to wait.

        Calls start strictly in order, so the queue is the suffix from `_next_start`.
        """
        while self._next_start < len(self._calls):
            call = self._calls[self._next_start]
            if call.status is CallStatus.QUEUED:
                if not self._can_start(call):
                    break
                self._start(call)
            self._next_start += 1

    def _start(self, call: _Call) -> None:
        call.status = CallStatus.RUNNING
        self._running.add(call)
        self.timings[call.block.id] = (time.monotonic(), None)
        task = asyncio.get_running_loop().create_task(self._run(call))
        call.task = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, call: _Call) -> None:
        if self._ctx.observer is not None:
            # In this task: what the observer sets in the context is the call's alone.
            self._ctx.observer.tool_started(call.block)
        stream = run_tool_call(
            call.block,
            self._tools,
            self._ctx,
            permission=self._permission,
            hooks=self._hooks,
            outcome=call.outcome,
        )
        try:
            async for message in stream:
                sink = self._progress if isinstance(message, ProgressMessage) else call.results
                sink.append(message)
                self._changed.set()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if call.status is not CallStatus.RUNNING or (task is not None and task.cancelling()):
                raise
            # A tool raised CancelledError on its own: report it instead of hanging the round.
            self._fail_call(call, f"{call.block.name} was cancelled unexpectedly")
        except Exception as exc:  # run_tool_call never raises; this guards against bugs
            self._fail_call(call, f"Error: {type(exc).__name__}: {exc}")
        self._on_finished(call)

    def _fail_call(self, call: _Call, text: str) -> None:
        if not any(_is_result(m) for m in call.results):
            call.results.append(error_result_message(call.block.id, text))

    def _on_finished(self, call: _Call) -> None:
        self._mark_done(call)
        if call.outcome.stop_reason and self.stop_reason is None:
            self.stop_reason = call.outcome.stop_reason
        if _cancels_siblings(call.outcome) and self._sibling_error is None:
            tool_name = call.outcome.tool.name if call.outcome.tool else call.block.name
            text = self._sibling_error = SIBLING_CANCELLED.format(tool=tool_name)
            self._cancel_unfinished(lambda other: error_result_message(other.block.id, text))
        if not self._discarded:
            self._schedule()
        if not self.has_unfinished:
            self._stop_abort_watch()

    def _mark_done(self, call: _Call) -> None:
        self._running.discard(call)
        if call.block.id in self.timings:
            start, _ = self.timings[call.block.id]
            self.timings[call.block.id] = (start, time.monotonic())
        call.status = CallStatus.DONE
        if self._ctx.observer is not None:
            self._ctx.observer.tool_finished(
                call.block, call.results, permission=call.outcome.permission
            )
        self._changed.set()

    def _finish_unrun(self, call: _Call, result: Message) -> None:
        """Give a call that will not (or no longer) run its error `result`."""
        if call.task is not None and not call.task.done():
            call.task.cancel()
        call.results = [result]
        self._mark_done(call)

    def _cancel_unfinished(self, result: Callable[[_Call], Message]) -> None:
        for call in itertools.islice(self._calls, self._next_yield, None):
            if call.status in (CallStatus.QUEUED, CallStatus.RUNNING):
                self._finish_unrun(call, result(call))

    # -- abort -------------------------------------------------------------------------

    def _ensure_abort_watch(self) -> None:
        if self._abort_watch is None or self._abort_watch.done():
            self._abort_watch = asyncio.get_running_loop().create_task(self._watch_abort())

    def _stop_abort_watch(self) -> None:
        if self._abort_watch is not None and not self._abort_watch.done():
            self._abort_watch.cancel()
        self._abort_watch = None

    async def _watch_abort(self) -> None:
        await self._ctx.abort.wait()
        if self._discarded:
            return
        self.aborted = True
        self._cancel_unfinished(_aborted)


async def run_tools(
    blocks: Sequence[ToolUseBlock],
    tools: Sequence[Tool],
    ctx: ToolContext,
    *,
    permission: PermissionChecker | None = None,
    hooks: ToolHooks | None = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
) -> AsyncIterator[Message]:
    """The non-streaming path: run the blocks batch by batch and yield messages in order.

    Consecutive concurrency-safe calls form one parallel batch; every other call is a batch
    of its own. Use `ToolRun` instead when you need `stop_reason`, `aborted` or timings.
    """
    run = ToolRun(
        blocks, tools, ctx, permission=permission, hooks=hooks, max_concurrency=max_concurrency
    )
    async for message in run:
        yield message


def partition_tool_calls(
    blocks: Sequence[ToolUseBlock], tools: Sequence[Tool]
) -> list[list[ToolUseBlock]]:
    """Split calls into batches: runs of consecutive safe calls, and each unsafe call alone."""
    batches: list[list[ToolUseBlock]] = []
    previous_safe = False
    for block in blocks:
        safe = is_call_concurrency_safe(block, tools)
        if safe and previous_safe:
            batches[-1].append(block)
        else:
            batches.append([block])
        previous_safe = safe
    return batches


class ToolRun:
    """An async iterator over the messages of a non-streaming round of tool calls.

    After iteration, `stop_reason`, `aborted` and `timings` describe the round.
    """

    def __init__(
        self,
        blocks: Sequence[ToolUseBlock],
        tools: Sequence[Tool],
        ctx: ToolContext,
        *,
        permission: PermissionChecker | None = None,
        hooks: ToolHooks | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> None:
        self._batches = partition_tool_calls(blocks, tools)
        self._tools = tools
        self._ctx = ctx
        self._permission = permission
        self._hooks = hooks
        self._max = max_concurrency
        self.stop_reason: str | None = None
        self.aborted = False
        self.timings: dict[str, tuple[float, float | None]] = {}

    def __aiter__(self) -> AsyncIterator[Message]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[Message]:
        for batch in self._batches:
            executor = StreamingToolExecutor(
                self._tools,
                self._ctx,
                permission=self._permission,
                hooks=self._hooks,
                max_concurrency=self._max,
            )
            for block in batch:
                executor.add_tool(block)
            async for message in executor.get_remaining_results():
                yield message
            self.timings.update(executor.timings)
            self.aborted = self.aborted or executor.aborted
            self.stop_reason = self.stop_reason or executor.stop_reason
