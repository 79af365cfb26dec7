"""`chat` spans for the requests a session makes beside its loop: compaction summaries,
tool-use summaries, prompt hooks' decisions.

The loop's own requests are drawn from its events (`thread_trace`); these never pass
through the loop's event stream, so the provider they are sent through is wrapped instead.
Each is billed like any other request, so a tracing backend that adds up
`gen_ai.usage.*` would otherwise come out short of the session's cost. The span is a child of
whatever is current when the request is sent (the turn, a manual compaction's span, the tool
call whose hook asks), and says why it was sent (`queryloop.request.purpose`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from ..abort import AbortSignal
from ..providers.base import (
    MessageComplete,
    ModelProvider,
    ModelRequest,
    ProviderEvent,
    ProviderWrapper,
)
from . import semconv
from .thread_trace import set_response

if TYPE_CHECKING:
    from .spans import OtelTelemetry


class TracedProvider(ProviderWrapper):
    """`inner` with a `chat` span per request (see the module docstring)."""

    def __init__(self, inner: ModelProvider, owner: OtelTelemetry, purpose: str) -> None:
        super().__init__(inner)
        self.owner = owner
        self.purpose = purpose

    async def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[ProviderEvent]:
        """The wrapped provider's stream inside a `chat` span, which is current while the
        provider works (one step at a time, so its retry events land on it)."""
        span = self.owner.tracer.start_span(
            f"{semconv.Operation.CHAT.value} {request.model}",
            kind=SpanKind.CLIENT,
            attributes={
                semconv.OPERATION: semconv.Operation.CHAT.value,
                semconv.PROVIDER: self.owner.provider_name,
                semconv.REQUEST_MODEL: request.model,
                semconv.REQUEST_MAX_TOKENS: request.max_tokens,
                semconv.REQUEST_STREAM: True,
                semconv.REQUEST_PURPOSE: self.purpose,
                semconv.CONVERSATION_ID: self.owner.conversation_id(),
            },
        )
        inner = self.inner.stream(request, abort)
        failure = "cancelled"  # a consumer that stops early never completes the request
        here = trace.set_span_in_context(span)
        try:
            while True:
                token = otel_context.attach(here)
                try:
                    event = await anext(inner, None)
                finally:
                    otel_context.detach(token)
                if event is None:
                    break
                if isinstance(event, MessageComplete):
                    set_response(span, event.response)
                    failure = ""
                yield event
        except Exception as exc:
            failure = type(exc).__name__
            raise
        finally:
            await inner.aclose()  # type: ignore[attr-defined]
            if failure:
                span.set_attribute(semconv.ERROR_TYPE, failure)
                span.set_status(StatusCode.ERROR)
            span.end()
