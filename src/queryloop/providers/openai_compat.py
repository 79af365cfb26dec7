"""The OpenAI-compatible provider, on the official `openai` SDK (chat completions, streamed).

Works with OpenAI itself and with local servers that speak the same API (Ollama, vLLM,
llama.cpp): set OPENAI_BASE_URL (for example `http://localhost:11434/v1`); the API key may be
any placeholder for servers that ignore it. Requests are translated from queryloop's
Anthropic-shaped `ModelRequest` and the streamed chunks back to canonical events
(`openai_translate`); errors map to the same typed errors as the Anthropic provider, and the
attempt loop is the same shared stream driver (`driver.py`). This module does not import the
`anthropic` SDK.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

import openai

from ..abort import AbortSignal
from .base import ModelRequest, ProviderEvent
from .choice import split_model_name
from .driver import drive_stream
from .errors_map import map_openai_error
from .openai_translate import OpenAIChunkAssembler, to_openai_body
from .retry import DEFAULT_RETRY, RetryPolicy
from .sdk_client import SDKClientProvider, split_sdk_kwargs
from .tls import shared_tls_context

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
            http_client=openai.DefaultAsyncHttpxClient(verify=shared_tls_context()),
        )
        super().__init__(made, owns_client=client is None, retry=retry)

    def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[ProviderEvent]:
        """Stream `request`'s response as canonical events (see `ModelProvider`)."""
        return drive_stream(
            lambda: self._open(request), OpenAIChunkAssembler, map_openai_error, self.retry, abort
        )

    async def _open(self, request: ModelRequest) -> Any:
        body = to_openai_body(request)
        body.pop("stream", None)
        body["model"] = split_model_name(request.model)[1]  # "ollama:qwen2.5" -> "qwen2.5"
        create = self._client.chat.completions.create
        try:
            return await create(**split_sdk_kwargs(create, body), stream=True)
        except openai.OpenAIError as exc:
            raise map_openai_error(exc) from exc
