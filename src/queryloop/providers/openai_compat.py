"""The OpenAI-compatible provider, on the official `openai` SDK (chat completions, streamed).

Works with OpenAI itself and with local servers that speak the same API (Ollama, vLLM,
llama.cpp): set OPENAI_BASE_URL (for example `http://localhost:11434/v1`); the API key may be
any placeholder for servers that ignore it. Requests are translated from queryloop's
Anthropic-shaped `ModelRequest` and the streamed chunks back to canonical events
(`openai_translate`); errors map to the same typed errors as the Anthropic provider.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any

import openai

from ..abort import AbortSignal
from .anthropic import split_sdk_kwargs
from .base import MessageStart, ModelRequest, StreamEvent
from .errors import ProviderConnectionError, ProviderError
from .errors_map import map_openai_error
from .factory import split_model_name
from .openai_translate import OpenAIChunkAssembler, to_openai_body
from .retry import DEFAULT_RETRY, RetryPolicy, aborted_error, race_abort, retrying_stream
from .sdk_client import SDKClientProvider

PLACEHOLDER_KEY = "sk-no-key-needed"


class OpenAICompatProvider(SDKClientProvider[openai.AsyncOpenAI]):
    """A `ModelProvider` for OpenAI-compatible chat-completions servers.

    `base_url` defaults to OPENAI_BASE_URL (then the SDK's default, api.openai.com);
    `api_key` to OPENAI_API_KEY, then a placeholder that local servers accept.
    """

    name = "openai"

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        retry: RetryPolicy = DEFAULT_RETRY,
        timeout: float = 600.0,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        key = api_key or os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_KEY
        made = client or openai.AsyncOpenAI(
            api_key=key,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL") or None,
            max_retries=0,
            timeout=timeout,
        )
        super().__init__(made, owns_client=client is None, retry=retry)

    def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream `request`'s response as canonical events (see `ModelProvider`)."""
        return retrying_stream(lambda: self._attempt(request, abort), self.retry, abort)

    async def _attempt(
        self, request: ModelRequest, abort: AbortSignal | None
    ) -> AsyncGenerator[StreamEvent, None]:
        assembler = OpenAIChunkAssembler()
        on_abort = _on_abort(abort, assembler)
        sdk_stream = await race_abort(self._open(request), abort, on_abort)
        held: list[StreamEvent] = []
        yielded = False
        try:
            iterator = sdk_stream.__aiter__()
            while True:
                try:
                    chunk = await race_abort(iterator.__anext__(), abort, on_abort)
                except StopAsyncIteration:
                    break
                except ProviderError:
                    raise
                except Exception as exc:
                    error = _mid_stream_error(exc, assembler, yielded)
                    raise error from (error.__cause__ or exc)
                out = assembler.feed(chunk.to_dict())
                if not yielded and all(isinstance(e, MessageStart) for e in out):
                    held.extend(out)
                    continue
                for event in [*held, *out]:
                    yielded = True
                    yield event
                held = []
        finally:
            await sdk_stream.close()
        if not assembler.finished and not yielded:
            raise ProviderConnectionError("the stream ended before any content arrived")
        for event in [*held, *assembler.finish()]:
            yield event

    async def _open(self, request: ModelRequest) -> Any:
        body = to_openai_body(request)
        body.pop("stream", None)
        body["model"] = split_model_name(request.model)[1]  # "ollama:qwen2.5" -> "qwen2.5"
        create = self._client.chat.completions.create
        try:
            return await create(**split_sdk_kwargs(create, body), stream=True)
        except openai.OpenAIError as exc:
            raise map_openai_error(exc) from exc


def _mid_stream_error(
    exc: Exception, assembler: OpenAIChunkAssembler, yielded: bool
) -> ProviderError:
    typed = map_openai_error(exc)
    if not yielded:
        return typed
    interrupted = assembler.interrupted(f"the stream broke: {typed}")
    typed.__cause__ = exc
    interrupted.__cause__ = typed
    return interrupted


def _on_abort(
    abort: AbortSignal | None, assembler: OpenAIChunkAssembler
) -> Callable[[], ProviderError]:
    def make() -> ProviderError:
        signal = abort or AbortSignal()
        return aborted_error(signal, assembler.interrupted(f"aborted ({signal.reason})"))

    return make
