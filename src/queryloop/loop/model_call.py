"""Phase 3 of an iteration: one model call, streamed, with fallback and stream-retry.

`ModelCall.run()` yields loop events as they happen and, last, the `ModelOutcome`: what
the call left behind. Tool calls are handed to the streaming executor the moment their
block completes, so tools run while the model is still writing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..abort import AbortSignal
from ..messages.blocks import AssistantContentBlock, TextBlock, ToolUseBlock
from ..messages.constructors import system_message, tombstone
from ..messages.types import (
    AssistantMessage,
    Message,
    ProgressMessage,
    SystemSubtype,
    TombstoneReason,
)
from ..messages.usage import Usage
from ..providers.base import (
    BlockComplete,
    MessageComplete,
    MessageStart,
    ModelProvider,
    ModelRequest,
    RetryWait,
    TextDelta,
)
from ..providers.errors import OverloadedError, ProviderError, StreamInterruptedError
from ..tools.executor import StreamingToolExecutor
from .deps import CONTEXT_MANAGEMENT_BETA, QueryParams
from .events import (
    ApiRetry,
    LoopEvent,
    MessageDraft,
    MessageEvent,
    RequestStart,
    StreamDelta,
)


@dataclass(frozen=True, slots=True)
class ModelOutcome:
    """What one model call left behind (the last item `ModelCall.run()` yields)."""

    model: str
    assistant_messages: tuple[AssistantMessage, ...] = ()
    tool_uses: tuple[ToolUseBlock, ...] = ()
    stop_reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    error: ProviderError | None = None
    executor: StreamingToolExecutor | None = None
    early_results: tuple[Message, ...] = ()
    """Tool results that finished while the model was still streaming."""

    @property
    def needs_follow_up(self) -> bool:
        """The model asked for tools (and the call did not fail)."""
        return bool(self.tool_uses) and self.error is None


class _Attempt:
    """Assembles one streamed response into assistant messages, one per content block.

    Every block but the last is emitted as soon as it completes; the last is held until the
    response ends so that it can carry the stop reason and the final usage. A held block
    that holds a tool call is drafted (written, see `MessageDraft`) before the call starts.
    Text still streaming is kept too, so that an interrupted answer keeps what arrived.
    """

    def __init__(self, model: str) -> None:
        self.model = model
        self.message_id = ""
        self.held: AssistantMessage | None = None
        self.emitted: list[AssistantMessage] = []
        self.tool_uses: list[ToolUseBlock] = []
        self.drafted: set[str] = set()
        """uuids of held messages written as drafts."""
        self.stop_reason: str | None = None
        self.usage = Usage()
        """The response's, once it completed."""
        self.early_results: list[Message] = []
        """Tool results that finished while the model was still streaming."""
        self._open_text: dict[int, list[str]] = {}
        """Text blocks still streaming: index -> the deltas so far."""

    def on_text(self, event: TextDelta) -> None:
        self._open_text.setdefault(event.index, []).append(event.text)

    def on_block(self, event: BlockComplete) -> AssistantMessage | None:
        self._open_text.pop(event.index, None)
        ready = self.held
        self.held = self._message((event.block,))
        if ready is not None:
            self.emitted.append(ready)
        return ready

    def draft(self) -> AssistantMessage:
        """The held message, marked as drafted (it holds a tool call about to start)."""
        assert self.held is not None
        self.drafted.add(self.held.uuid)
        return self.held

    def finish(self, event: MessageComplete) -> AssistantMessage:
        response = event.response
        self.usage = response.usage
        self.stop_reason = response.stop_reason
        last = self.held or AssistantMessage(content=(), message_id=response.id, model=self.model)
        final = dataclasses.replace(
            last, stop_reason=response.stop_reason, usage=response.usage, model=response.model
        )
        self.held = None
        self.emitted.append(final)
        return final

    def cut_off(self, *, keep_partial_text: bool) -> list[AssistantMessage]:
        """The stream stopped before message_stop: the held block and, with
        `keep_partial_text`, the text blocks still streaming (what the user saw), as messages
        without a stop reason. Partial thinking (unsigned) and partial tool input (never a
        call) are dropped."""
        kept: list[AssistantMessage] = []
        if self.held is not None:
            kept.append(self.held)
            self.held = None
        if keep_partial_text:
            for index in sorted(self._open_text):
                partial = "".join(self._open_text[index])
                if partial.strip():
                    kept.append(self._message((TextBlock(text=partial),)))
        self._open_text.clear()
        self.emitted.extend(kept)
        return kept

    def written(self) -> list[AssistantMessage]:
        """Every message of this attempt that reached the session (emitted or drafted)."""
        held = self.held
        drafted = [held] if held is not None and held.uuid in self.drafted else []
        return [*self.emitted, *drafted]

    def _message(self, content: tuple[AssistantContentBlock, ...]) -> AssistantMessage:
        return AssistantMessage(content=content, message_id=self.message_id, model=self.model)


class ModelCall:
    """Runs the model call of one iteration (see module docstring)."""

    def __init__(
        self,
        params: QueryParams,
        messages: list[Message],
        *,
        model: str,
        max_tokens: int,
        context_management: Mapping[str, Any] | None,
        turn: int = 1,
    ) -> None:
        self.turn = turn
        self.params = params
        self.messages = messages
        self.model = model
        self.max_tokens = max_tokens
        self.context_management = context_management

    def _request(self, model: str) -> ModelRequest:
        request = self.params.request_builder.build(
            self.messages, max_tokens=self.max_tokens, model=model
        )
        if self.context_management:
            betas = tuple(dict.fromkeys([*request.betas, CONTEXT_MANAGEMENT_BETA]))
            request = dataclasses.replace(
                request, context_management=self.context_management, betas=betas
            )
        return request

    def _provider_for(self, model: str) -> ModelProvider:
        if model == self.params.fallback_model and self.params.fallback_provider is not None:
            return self.params.fallback_provider
        return self.params.provider

    def _new_executor(self) -> StreamingToolExecutor | None:
        if not self.params.streaming_tools:
            return None
        return StreamingToolExecutor(
            self.params.tools,
            self.params.tool_context,
            permission=self.params.permission,
            hooks=self.params.tool_hooks,
            max_concurrency=self.params.max_tool_concurrency,
        )

    async def run(self) -> AsyncIterator[LoopEvent | ModelOutcome]:
        """Call the model, falling back or retrying a broken stream when that is safe. The
        last item is the `ModelOutcome`."""
        model = self.model
        stream_retries = self.params.stream_retries
        while True:
            executor = self._new_executor()
            attempt = _Attempt(model)
            yield RequestStart(turn=self.turn, model=model)
            error: ProviderError | None = None
            try:
                async for event in self._stream(model, attempt, executor):
                    yield event
            except OverloadedError as exc:
                if not self._can_fall_back(model):
                    error = exc
                else:
                    async for event in self._abandon(
                        attempt, executor, TombstoneReason.MODEL_FALLBACK
                    ):
                        yield event
                    yield MessageEvent(self._fallback_notice(model))
                    model = self.params.fallback_model or model
                    continue
            except StreamInterruptedError as exc:
                if attempt.tool_uses or stream_retries <= 0 or self._aborted():
                    error = exc
                else:
                    stream_retries -= 1
                    async for event in self._abandon(
                        attempt, executor, TombstoneReason.STREAM_RETRY
                    ):
                        yield event
                    continue
            except ProviderError as exc:
                error = exc
            async for last in self._keep(attempt, executor, error):
                yield last
            return

    def _fallback_notice(self, model: str) -> Message:
        return system_message(
            SystemSubtype.MODEL_FALLBACK,
            f"{model} is overloaded; switched to {self.params.fallback_model}",
            level="warning",
            metadata={"from": model, "to": self.params.fallback_model},
        )

    def _aborted(self) -> bool:
        return self.params.tool_context.abort.aborted

    def _can_fall_back(self, model: str) -> bool:
        fallback = self.params.fallback_model
        return fallback is not None and fallback != model and not self._aborted()

    async def _stream(
        self, model: str, attempt: _Attempt, executor: StreamingToolExecutor | None
    ) -> AsyncIterator[LoopEvent]:
        provider = self._provider_for(model)
        abort = self.params.tool_context.abort
        stream = provider.stream(self._request(model), abort)
        try:
            async for event in self._events(stream, attempt, executor, abort):
                yield event
        finally:
            # Close the provider's stream now (an abort leaves it suspended): its HTTP
            # response is released and its usage is accounted for at once.
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()

    async def _events(
        self,
        stream: AsyncIterator[Any],
        attempt: _Attempt,
        executor: StreamingToolExecutor | None,
        abort: AbortSignal,
    ) -> AsyncIterator[LoopEvent]:
        async for event in stream:
            if isinstance(event, RetryWait):
                yield ApiRetry(
                    event.attempt, event.max_retries, event.delay_s, event.error, attempt.model
                )
                continue
            if isinstance(event, MessageStart):
                attempt.message_id = event.message_id
            elif isinstance(event, TextDelta):
                attempt.on_text(event)
            elif isinstance(event, BlockComplete):
                async for loop_event in self._on_block(event, attempt, executor):
                    yield loop_event
            elif isinstance(event, MessageComplete):
                yield StreamDelta(event)
                yield MessageEvent(attempt.finish(event))
                continue
            yield StreamDelta(event)
            if executor is not None:
                for message in executor.get_completed_results():
                    # Progress goes out live; results wait until the assistant message is
                    # whole, so the array keeps tool_use before tool_result.
                    if isinstance(message, ProgressMessage):
                        yield MessageEvent(message)
                    else:
                        attempt.early_results.append(message)
            if abort.aborted:
                return

    async def _on_block(
        self, event: BlockComplete, attempt: _Attempt, executor: StreamingToolExecutor | None
    ) -> AsyncIterator[LoopEvent]:
        """A block is whole: emit the one before it; a tool call starts once it is durable."""
        call = event.block if isinstance(event.block, ToolUseBlock) else None
        if call is not None:
            attempt.tool_uses.append(call)
        ready = attempt.on_block(event)
        if ready is not None:
            yield MessageEvent(ready)
        if call is not None and executor is not None:
            # The session writes the draft before this generator resumes, so the call is
            # in the transcript before the tool's `tool_start` record (issue 25, item 15).
            yield MessageDraft(attempt.draft())
            executor.add_tool(call)

    async def _keep(
        self,
        attempt: _Attempt,
        executor: StreamingToolExecutor | None,
        error: ProviderError | None,
    ) -> AsyncIterator[LoopEvent | ModelOutcome]:
        """End the call with what the attempt produced. A stream stopped before message_stop
        (an abort, a failure) still emits its held block: a tool call that ran keeps its
        call, and an interrupted answer keeps the text that arrived."""
        for message in attempt.cut_off(keep_partial_text=self._aborted()):
            yield MessageEvent(message)
        yield ModelOutcome(
            model=attempt.model,
            assistant_messages=tuple(attempt.emitted),
            tool_uses=tuple(attempt.tool_uses),
            stop_reason=attempt.stop_reason,
            usage=attempt.usage,
            error=error,
            executor=executor,
            early_results=tuple(attempt.early_results),
        )

    async def _abandon(
        self, attempt: _Attempt, executor: StreamingToolExecutor | None, reason: TombstoneReason
    ) -> AsyncIterator[LoopEvent]:
        """Void a failed attempt: stop its tools and tombstone what it emitted (its early
        results go with it: the next attempt starts afresh)."""
        if executor is not None:
            executor.discard(reason)
        for message in attempt.written():
            yield MessageEvent(tombstone(message.uuid, reason))
