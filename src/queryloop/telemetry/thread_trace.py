"""One thread's spans (the main thread's or a subagent's): `OtelThreadTrace` turns the
loop's events into the `invoke_agent` span of a prompt and the `chat` span of each model
request, and, as the thread's `ToolObserver`, opens an `execute_tool` span per call. The
session's side (hooks, background tasks, the tracer) and the trace as a whole are in
`spans`."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import aclosing, contextmanager
from typing import TYPE_CHECKING, Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, StatusCode

from ..loop.events import (
    CompactionEvent,
    LoopEvent,
    MessageEvent,
    RequestStart,
    StreamDelta,
    TerminalEvent,
    TransitionEvent,
)
from ..loop.reasons import Continue, Terminal
from ..messages.blocks import ToolUseBlock
from ..messages.constructors import tool_result_for
from ..messages.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    SystemSubtype,
    TombstoneMessage,
    TombstoneReason,
    UserMessage,
)
from ..messages.usage import Usage
from ..providers.base import (
    BlockStart,
    MessageComplete,
    ModelResponse,
    TextDelta,
    ThinkingDelta,
)
from ..tools.base import DenialSource
from . import content, semconv
from .base import ThreadTrace

if TYPE_CHECKING:
    from .spans import OtelTelemetry

_FIRST_CONTENT = (BlockStart, TextDelta, ThinkingDelta)
_FAILED_TERMINALS = frozenset(
    {Terminal.MODEL_ERROR, Terminal.PROMPT_TOO_LONG, Terminal.IMAGE_ERROR, Terminal.BLOCKING_LIMIT}
)


class OtelThreadTrace(ThreadTrace):
    """One thread's spans (the whole trace is drawn in `spans`). Mutable: the open turn,
    request and tool spans of the thread."""

    enabled = True

    def __init__(
        self,
        owner: OtelTelemetry,
        *,
        agent_name: str,
        model: str,
        agent_id: str | None,
        description: str,
    ) -> None:
        self._owner = owner
        self._tracer = owner.tracer
        self.agent_name = agent_name
        self.agent_id = agent_id
        self.description = description
        self.model = model
        self._turn: Span | None = None
        self._turn_context: Context | None = None
        self._recording = False
        self._context_now: Context = otel_context.get_current()
        """What `_step` attaches: the open request's span, else the turn's."""
        self._usage = Usage()
        self._chat: _Request | None = None
        self._pending: list[Message] = []
        """Messages added since the last request (the next request's new input: content)."""
        self._tools: dict[str, Span] = {}
        self._iteration_started = time.time_ns()
        """Since when the loop has worked toward its next request: where a compaction
        span starts (it is drawn when the compaction is done, its summary request inside)."""

    # ---- the turn ------------------------------------------------------------------------

    async def run(
        self, events: AsyncIterator[LoopEvent], *, prompt: str | None = None
    ) -> AsyncIterator[LoopEvent]:
        self._begin_turn(prompt)
        failure: BaseException | None = None
        try:
            async with aclosing(events):  # type: ignore[type-var]
                while True:
                    event = await self._step(events)
                    if event is None:
                        break
                    self.observe(event)
                    yield event
        except BaseException as exc:  # cancelled or failed: the span says so, then re-raise
            failure = exc
            raise
        finally:
            self._end_turn(failure)

    async def _step(self, events: AsyncIterator[LoopEvent]) -> LoopEvent | None:
        """The next event, computed with the turn's (or its request's) span current. The
        context is attached and detached within this one step, so it never leaks into the
        caller's code between events, whichever task closes the generator."""
        if not self._recording:  # no SDK records: nothing to hand on (the API's no-op)
            return await anext(events, None)
        token = otel_context.attach(self._context_now)
        try:
            return await anext(events, None)
        finally:
            otel_context.detach(token)

    def _begin_turn(self, prompt: str | None) -> None:
        self._iteration_started = time.time_ns()
        attributes: dict[str, Any] = {
            semconv.OPERATION: semconv.Operation.INVOKE_AGENT.value,
            semconv.PROVIDER: self._owner.provider_name,
            semconv.REQUEST_MODEL: self.model,
            semconv.AGENT_NAME: self.agent_name,
            semconv.CONVERSATION_ID: self._owner.conversation_id(),
        }
        if self.agent_id:
            attributes[semconv.AGENT_ID] = self.agent_id
        if self.description:
            attributes[semconv.AGENT_DESCRIPTION] = self.description
        if prompt is not None and self._owner.capture_content:
            attributes[semconv.INPUT_MESSAGES] = content.to_json(
                [{"role": "user", "parts": [{"type": "text", "content": prompt}]}]
            )
        self._turn = self._tracer.start_span(
            f"invoke_agent {self.agent_name}", kind=SpanKind.INTERNAL, attributes=attributes
        )
        self._turn_context = self._context_now = trace.set_span_in_context(self._turn)
        self._recording = self._turn.is_recording()
        self._usage = Usage()
        self._pending = []

    def _end_turn(self, failure: BaseException | None) -> None:
        self._close_chat(_error_type(failure) if failure else "cancelled")
        turn, self._turn = self._turn, None
        if turn is None:
            return
        set_usage(turn, self._usage)
        if failure is not None:
            turn.set_attribute(semconv.ERROR_TYPE, _error_type(failure))
            turn.set_status(StatusCode.ERROR)
        turn.end()

    # ---- loop events ---------------------------------------------------------------------

    def observe(self, event: LoopEvent) -> None:
        """Turn one loop event into what it means for the spans (most mean nothing)."""
        if isinstance(event, RequestStart):
            self._request_start(event)
        elif isinstance(event, StreamDelta):
            self._stream(event)
        elif isinstance(event, MessageEvent):
            self._message(event.message)
        elif isinstance(event, CompactionEvent):
            self._compacted(event, self._iteration_started)
            self._iteration_started = time.time_ns()
        elif isinstance(event, TransitionEvent):
            self._iteration_started = time.time_ns()
            if event.reason is not Continue.NEXT_TURN and self._turn is not None:
                attrs: dict[str, str | int] = {"reason": event.reason.value, "turn": event.turn}
                self._turn.add_event(semconv.EVENT_TRANSITION, attrs)
        elif isinstance(event, TerminalEvent):
            self._terminal(event)

    def _close_chat(self, failure: str) -> None:
        """End the open request: complete if its response arrived, else failed."""
        chat, self._chat = self._chat, None
        if chat is None:
            return
        if self._turn_context is not None:
            self._context_now = self._turn_context
        if chat.response is not None:
            chat.complete(self._owner.capture_content)
        else:
            chat.abandon(chat.abandoned or failure)

    def _request_start(self, event: RequestStart) -> None:
        self._close_chat("abandoned")  # a previous attempt that never completed
        attributes: dict[str, Any] = {
            semconv.OPERATION: semconv.Operation.CHAT.value,
            semconv.PROVIDER: self._owner.provider_name,
            semconv.REQUEST_MODEL: event.model,
            semconv.REQUEST_STREAM: True,
            semconv.CONVERSATION_ID: self._owner.conversation_id(),
        }
        if self._owner.capture_content and self._pending:
            attributes[semconv.INPUT_MESSAGES] = content.messages_json(self._pending)
        self._pending = []
        span = self._tracer.start_span(
            f"{semconv.Operation.CHAT.value} {event.model}",
            context=self._turn_context,
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        self._chat = _Request(span)
        self._context_now = trace.set_span_in_context(span, self._turn_context)

    def _stream(self, delta: StreamDelta) -> None:
        chat = self._chat
        if chat is None:
            return
        event = delta.event
        if isinstance(event, MessageComplete):
            # The response's last message follows this event; the span ends with it.
            self._usage = self._usage + event.response.usage
            chat.response = event
        elif isinstance(event, _FIRST_CONTENT):
            chat.first_chunk()

    def _message(self, message: Message) -> None:
        if isinstance(message, AssistantMessage):
            if self._chat is not None:
                self._chat.output.append(message)
                if message.stop_reason is not None and self._chat.response is not None:
                    self._close_chat("")
            return
        if isinstance(message, UserMessage):
            if self._owner.capture_content:
                self._pending.append(message)
            return
        if isinstance(message, TombstoneMessage) and message.reason == TombstoneReason.STREAM_RETRY:
            if self._chat is not None:
                self._chat.abandoned = "stream_interrupted"
            if self._turn is not None:
                self._turn.add_event(semconv.EVENT_RETRY, {"reason": "stream_interrupted"})
            return
        if isinstance(message, SystemMessage) and message.subtype is SystemSubtype.MODEL_FALLBACK:
            if self._chat is not None:
                self._chat.abandoned = "overloaded"
            if self._turn is not None:
                attrs = {k: str(v) for k, v in message.metadata.items() if v is not None}
                self._turn.add_event(semconv.EVENT_FALLBACK, attrs)

    def _terminal(self, event: TerminalEvent) -> None:
        turn = self._turn
        self._close_chat(
            type(event.error).__name__ if event.error is not None else event.reason.value
        )
        if turn is None:
            return
        turn.set_attribute(semconv.TERMINAL, event.reason.value)
        turn.set_attribute(semconv.TURNS, event.turn)
        if event.reason in _FAILED_TERMINALS:
            turn.set_attribute(semconv.ERROR_TYPE, event.reason.value)
            turn.set_status(StatusCode.ERROR)

    # ---- compaction ----------------------------------------------------------------------

    def _compacted(self, event: CompactionEvent, started_ns: int) -> None:
        span = self._tracer.start_span(
            f"compaction {event.trigger.value}",
            context=self._turn_context,
            kind=SpanKind.INTERNAL,
            start_time=started_ns,
        )
        _compaction_attributes(span, event)
        span.end()

    @contextmanager
    def compaction(self) -> Iterator[Callable[[CompactionEvent | None], None]]:
        span = self._tracer.start_span("compaction manual", kind=SpanKind.INTERNAL)
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            yield lambda event: _compaction_attributes(span, event)
        finally:
            otel_context.detach(token)
            span.end()

    # ---- ToolObserver ----------------------------------------------------------------------

    def tool_started(self, block: ToolUseBlock) -> None:
        span = self._tool_span(block)
        self._tools[block.id] = span
        if span.is_recording():
            # In the call's own task: what runs there (hooks, a subagent, a Bash process)
            # sees this span as current. The context ends with the task; nothing to detach.
            otel_context.attach(trace.set_span_in_context(span))

    def tool_finished(
        self,
        block: ToolUseBlock,
        results: Sequence[Message],
        *,
        permission: DenialSource | None = None,
    ) -> None:
        span = self._tools.pop(block.id, None) or self._tool_span(block)
        outcome, denial = _tool_outcome(block.id, results)
        span.set_attribute(semconv.TOOL_OUTCOME, outcome.value)
        if denial is not None:
            span.set_attribute(semconv.PERMISSION_DECISION, "deny")
            span.set_attribute(semconv.PERMISSION_SOURCE, str(denial.get("source") or ""))
            if denial.get("rule"):
                span.set_attribute(semconv.PERMISSION_RULE, str(denial["rule"]))
        elif permission is not None:
            span.set_attribute(semconv.PERMISSION_DECISION, "allow")
            span.set_attribute(semconv.PERMISSION_SOURCE, permission.value)
        if outcome is semconv.ToolOutcome.ERROR:
            span.set_attribute(semconv.ERROR_TYPE, "tool_error")
            span.set_status(StatusCode.ERROR)
        if self._owner.capture_content:
            result = tool_result_for(block.id, results)
            if result is not None:
                span.set_attribute(semconv.TOOL_RESULT, content.result_text(result))
        span.end()

    def _tool_span(self, block: ToolUseBlock) -> Span:
        attributes: dict[str, Any] = {
            semconv.OPERATION: semconv.Operation.EXECUTE_TOOL.value,
            semconv.TOOL_NAME: block.name,
            semconv.TOOL_CALL_ID: block.id,
            semconv.TOOL_TYPE: "function",
            semconv.CONVERSATION_ID: self._owner.conversation_id(),
        }
        if self._owner.capture_content:
            attributes[semconv.TOOL_ARGUMENTS] = content.arguments_json(block.input)
        return self._tracer.start_span(
            f"{semconv.Operation.EXECUTE_TOOL.value} {block.name}",
            context=self._turn_context,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )


class _Request:
    """One open `chat` span and what its response has said so far."""

    def __init__(self, span: Span) -> None:
        self.span = span
        self.started = time.monotonic()
        self.first = False
        self.output: list[AssistantMessage] = []
        self.response: MessageComplete | None = None
        self.abandoned: str | None = None
        """Why the attempt will not complete, once the loop said so (fallback, retry)."""

    def first_chunk(self) -> None:
        if not self.first:
            self.first = True
            elapsed = time.monotonic() - self.started
            self.span.set_attribute(semconv.TIME_TO_FIRST_CHUNK, round(elapsed, 6))

    def complete(self, capture: bool) -> None:
        assert self.response is not None
        response = self.response.response
        span = self.span
        set_response(span, response)
        if capture:
            span.set_attribute(
                semconv.OUTPUT_MESSAGES, content.output_json(self.output, response.stop_reason)
            )
        span.end()

    def abandon(self, error_type: str) -> None:
        self.span.set_attribute(semconv.ERROR_TYPE, error_type)
        self.span.set_status(StatusCode.ERROR)
        self.span.end()


def set_response(span: Span, response: ModelResponse) -> None:
    """The response attributes of a `chat` span: id, model, finish reason, usage."""
    if response.id:
        span.set_attribute(semconv.RESPONSE_ID, response.id)
    if response.model:
        span.set_attribute(semconv.RESPONSE_MODEL, response.model)
    span.set_attribute(semconv.FINISH_REASONS, [response.stop_reason or ""])
    set_usage(span, response.usage)


def set_usage(span: Span, usage: Usage) -> None:
    """The `gen_ai.usage.*` attributes (a request's, or a turn's sum)."""
    span.set_attribute(semconv.INPUT_TOKENS, usage.total_input_tokens)
    span.set_attribute(semconv.OUTPUT_TOKENS, usage.output_tokens)
    span.set_attribute(semconv.CACHE_READ_TOKENS, usage.cache_read_input_tokens)
    span.set_attribute(semconv.CACHE_CREATION_TOKENS, usage.cache_creation_input_tokens)


def _compaction_attributes(span: Span, event: CompactionEvent | None) -> None:
    if event is None:
        span.set_attribute(semconv.COMPACT_FREED_TOKENS, 0)
        return
    span.set_attribute(semconv.COMPACT_TRIGGER, event.trigger.value)
    span.set_attribute(semconv.COMPACT_PRE_TOKENS, event.pre_tokens)
    span.set_attribute(semconv.COMPACT_POST_TOKENS, event.post_tokens)
    span.set_attribute(semconv.COMPACT_FREED_TOKENS, max(0, event.pre_tokens - event.post_tokens))


def _tool_outcome(
    tool_use_id: str, results: Sequence[Message]
) -> tuple[semconv.ToolOutcome, dict[str, Any] | None]:
    """How a call ended, read from its messages: a `permission_denied` record beside it
    says it was refused (and by whom); an interrupted stand-in, an is_error result."""
    for message in results:
        if (
            isinstance(message, SystemMessage)
            and message.subtype is SystemSubtype.PERMISSION_DENIED
            and message.metadata.get("tool_use_id") == tool_use_id
        ):
            return semconv.ToolOutcome.DENIED, dict(message.metadata)
    result = tool_result_for(tool_use_id, results)
    if result is None or result.interrupted is not None:
        return semconv.ToolOutcome.INTERRUPTED, None
    if result.is_error:
        return semconv.ToolOutcome.ERROR, None
    return semconv.ToolOutcome.OK, None


def _error_type(error: BaseException | None) -> str:
    """A low-cardinality name for a failure: its class, never its message (which may quote
    content the capture switch keeps out of the trace)."""
    return type(error).__name__ if error is not None else "error"
