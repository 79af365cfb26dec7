"""The Anthropic provider, on the official `anthropic` SDK (AsyncAnthropic, raw event stream).

The SDK's own retries are off (`max_retries=0`): queryloop's `RetryPolicy` decides, because it
must know whether the caller already saw events. Raw stream events go through the pure
`StreamAssembler`; SDK exceptions become queryloop's typed errors (`errors_map`).

`message_start` is held back until the next event arrives, so an `error` event sent right
after it (how the API reports an overload that happens as streaming starts) is still a clean,
retryable `OverloadedError` rather than an interrupted stream.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import Any

import anthropic

from ..abort import AbortSignal
from .assembler import StreamAssembler
from .base import MessageStart, ModelRequest, StreamEvent
from .errors import (
    AuthenticationError,
    ProviderConnectionError,
    ProviderError,
)
from .errors_map import map_anthropic_error
from .retry import DEFAULT_RETRY, RetryPolicy, aborted_error, race_abort, retrying_stream
from .sdk_client import SDKClientProvider


class AnthropicProvider(SDKClientProvider[anthropic.AsyncAnthropic]):
    """A `ModelProvider` for the Anthropic Messages API.

    `api_key`/`base_url` default to ANTHROPIC_API_KEY/ANTHROPIC_BASE_URL as the SDK reads them.
    Pass `client` to use a preconfigured `AsyncAnthropic` (queryloop then does not close it).
    Use as an async context manager, or call `aclose()`, to release connections.
    """

    name = "anthropic"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        retry: RetryPolicy = DEFAULT_RETRY,
        timeout: float = 600.0,
        client: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        made = client or anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout
        )
        super().__init__(made, owns_client=client is None, retry=retry)

    def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream `request`'s response as canonical events (see `ModelProvider`)."""
        return retrying_stream(lambda: self._attempt(request, abort), self.retry, abort)

    async def count_tokens(self, request: ModelRequest) -> int:
        """The API's exact input-token count for `request` (POST /v1/messages/count_tokens)."""
        body = request.to_body()
        body.pop("max_tokens", None)
        body.pop("temperature", None)
        body.pop("stop_sequences", None)
        body.pop("metadata", None)
        count = self._client.messages.count_tokens
        try:
            result = await count(**split_sdk_kwargs(count, body))
        except anthropic.AnthropicError as exc:
            raise map_anthropic_error(exc) from exc
        return int(result.input_tokens)

    # -- one attempt --------------------------------------------------------------------------

    async def _attempt(
        self, request: ModelRequest, abort: AbortSignal | None
    ) -> AsyncGenerator[StreamEvent, None]:
        assembler = StreamAssembler()
        sdk_stream = await race_abort(self._open(request), abort, _on_abort(abort, assembler))
        held: list[StreamEvent] = []
        yielded = False
        try:
            iterator = sdk_stream.__aiter__()
            while True:
                try:
                    raw = await race_abort(iterator.__anext__(), abort, _on_abort(abort, assembler))
                except StopAsyncIteration:
                    break
                except ProviderError:
                    raise
                except Exception as exc:
                    error = _mid_stream_error(exc, assembler, yielded)
                    raise error from (error.__cause__ or exc)
                out = assembler.feed(raw.to_dict())
                if not yielded and out and all(isinstance(e, MessageStart) for e in out):
                    held.extend(out)
                    continue
                for event in [*held, *out]:
                    yielded = True
                    yield event
                held = []
        finally:
            await sdk_stream.close()
        if not assembler.completed:
            if not yielded:
                raise ProviderConnectionError("the stream ended before any content arrived")
            raise assembler.interrupted("the stream ended before message_stop")
        for event in held:
            yield event

    async def _open(self, request: ModelRequest) -> Any:
        body = request.to_body()
        use_beta = bool(request.betas) or request.context_management is not None
        create = self._client.beta.messages.create if use_beta else self._client.messages.create
        kwargs = split_sdk_kwargs(create, body)
        if use_beta and request.betas:
            kwargs["betas"] = list(request.betas)
        try:
            return await create(**kwargs, stream=True)
        except anthropic.AnthropicError as exc:
            raise map_anthropic_error(exc) from exc
        except TypeError as exc:
            if "authentication" in str(exc).lower():
                raise AuthenticationError(
                    "no Anthropic credentials: set ANTHROPIC_API_KEY or pass api_key=",
                    status=401,
                ) from exc
            raise


_PARAMS: dict[Any, frozenset[str]] = {}


def split_sdk_kwargs(create: Any, body: Mapping[str, Any]) -> dict[str, Any]:
    """Known SDK parameters as keywords; everything else through `extra_body` (so a new API
    field, or one this SDK version dropped, still reaches the server)."""
    func = getattr(create, "__func__", create)
    known = _PARAMS.get(func)
    if known is None:
        known = frozenset(inspect.signature(create).parameters) - {"extra_body", "stream"}
        _PARAMS[func] = known
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs


def _mid_stream_error(exc: Exception, assembler: StreamAssembler, yielded: bool) -> ProviderError:
    """An error while reading the stream: typed and retryable before any event was yielded,
    otherwise a `StreamInterruptedError` carrying the completed blocks (cause attached)."""
    typed = map_anthropic_error(exc)
    if not yielded:
        return typed
    interrupted = assembler.interrupted(f"the stream broke: {typed}")
    typed.__cause__ = exc
    interrupted.__cause__ = typed
    return interrupted


def _on_abort(abort: AbortSignal | None, assembler: StreamAssembler) -> Callable[[], ProviderError]:
    def make() -> ProviderError:
        reason = abort.reason if abort is not None else "abort"
        return aborted_error(abort or AbortSignal(), assembler.interrupted(f"aborted ({reason})"))

    return make
