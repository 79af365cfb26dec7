"""The provider seam: `ModelRequest` in, canonical stream events out.

Canonical content is the Anthropic block shape (`queryloop.messages.blocks`); every provider
maps to and from it at its edge.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, runtime_checkable

from ..abort import AbortSignal
from ..messages.api_types import ApiMessage, ApiServerTool, ApiSystemBlock, ApiTool
from ..messages.blocks import AssistantContentBlock
from ..messages.usage import Usage
from .errors import ProviderError


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything one model call needs. `messages` are already normalized API messages and
    `system`/`tools`/`messages` already carry the cache_control breakpoints they should."""

    model: str
    messages: Sequence[ApiMessage]
    max_tokens: int
    system: Sequence[ApiSystemBlock] = ()
    tools: Sequence[ApiTool] = ()
    thinking: Mapping[str, Any] | None = None
    temperature: float | None = None
    tool_choice: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None
    stop_sequences: Sequence[str] = ()
    cache_ttl: str | None = None
    """The TTL written into cache_control markers ("5m" or "1h"); None when caching is off."""
    context_management: Mapping[str, Any] | None = None
    """Anthropic server-side context editing (for example clearing old tool results)."""
    betas: Sequence[str] = ()
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    server_tools: Sequence[ApiServerTool] = ()
    """Tools the API runs itself (the web search of WebSearch's side request), sent after
    `tools` in the request's tools array; only the Messages API has them."""

    def to_body(self) -> dict[str, Any]:
        """The Messages API request body (without `stream`)."""
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": list(self.messages),
        }
        if self.system:
            body["system"] = list(self.system)
        if self.tools or self.server_tools:
            body["tools"] = [*self.tools, *self.server_tools]
        if self.thinking is not None:
            body["thinking"] = dict(self.thinking)
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.tool_choice is not None:
            body["tool_choice"] = dict(self.tool_choice)
        if self.metadata:
            body["metadata"] = dict(self.metadata)
        if self.stop_sequences:
            body["stop_sequences"] = list(self.stop_sequences)
        if self.context_management is not None:
            body["context_management"] = dict(self.context_management)
        body.update(self.extra_body)
        return body


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """A whole assistant response, assembled from the stream."""

    id: str
    model: str
    content: tuple[AssistantContentBlock, ...]
    stop_reason: str | None
    usage: Usage
    stop_sequence: str | None = None


@dataclass(frozen=True, slots=True)
class MessageStart:
    """The response began."""

    message_id: str
    model: str
    usage: Usage


@dataclass(frozen=True, slots=True)
class BlockStart:
    """A content block began; for tool_use, its id and name are known already."""

    index: int
    block_type: str
    tool_use_id: str | None = None
    tool_name: str | None = None


@dataclass(frozen=True, slots=True)
class TextDelta:
    """More text for block `index`."""

    index: int
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """More thinking for block `index`."""

    index: int
    thinking: str


@dataclass(frozen=True, slots=True)
class InputJsonDelta:
    """More of a tool_use input's JSON for block `index` (not parseable on its own)."""

    index: int
    partial_json: str


@dataclass(frozen=True, slots=True)
class BlockComplete:
    """Block `index` is complete; `block` is final (a tool_use has its whole input)."""

    index: int
    block: AssistantContentBlock


@dataclass(frozen=True, slots=True)
class MessageDelta:
    """Top-level changes near the end: the stop reason and cumulative output usage."""

    stop_reason: str | None
    usage: Usage
    stop_sequence: str | None = None


@dataclass(frozen=True, slots=True)
class MessageComplete:
    """The response ended; `response` is the whole message."""

    response: ModelResponse


StreamEvent: TypeAlias = (
    MessageStart
    | BlockStart
    | TextDelta
    | ThinkingDelta
    | InputJsonDelta
    | BlockComplete
    | MessageDelta
    | MessageComplete
)
"""The events of a response: what it says, as it arrives."""


@dataclass(frozen=True, slots=True)
class RetryWait:
    """The request failed before any content with an error worth retrying (`RetryPolicy`):
    it is sent again in `delay_s` seconds, as retry `attempt` of at most `max_retries`.

    Not part of a response (so not a `StreamEvent`): it tells whoever waits why nothing
    arrives yet (an unreachable server is otherwise seconds of silence)."""

    attempt: int
    max_retries: int
    delay_s: float
    error: ProviderError


ProviderEvent: TypeAlias = StreamEvent | RetryWait
"""What `ModelProvider.stream` yields: the response's events, and a `RetryWait` before each
retry."""


@runtime_checkable
class ModelProvider(Protocol):
    """A model API. `stream` yields canonical events and ends with `MessageComplete`, or raises
    a `ProviderError` (after its own bounded retries for retryable failures that happened
    before any event was yielded; it may say so with a `RetryWait` before each)."""

    name: str

    def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[ProviderEvent]:
        """Send `request` and stream the response."""
        ...


class ProviderWrapper:
    """A provider around another: a subclass overrides `stream` (to meter it, trace it, ...);
    everything else (`name`, `aclose`, `count_tokens`, ...) is the wrapped provider's."""

    def __init__(self, inner: ModelProvider) -> None:
        self.inner = inner
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[ProviderEvent]:
        """The wrapped provider's stream, unchanged."""
        return self.inner.stream(request, abort)


async def complete(
    provider: ModelProvider, request: ModelRequest, abort: AbortSignal | None = None
) -> ModelResponse:
    """Run a request to completion and return the whole response (for side calls)."""
    response: ModelResponse | None = None
    async for event in provider.stream(request, abort):
        if isinstance(event, MessageComplete):
            response = event.response
    if response is None:
        from .errors import StreamInterruptedError

        raise StreamInterruptedError("the stream ended without a message_stop event")
    return response
