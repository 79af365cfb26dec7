"""The Anthropic provider, on the official `anthropic` SDK (AsyncAnthropic, raw event stream).

The SDK's own retries are off (`max_retries=0`): queryloop's `RetryPolicy` decides, because it
must know whether the caller already saw events. Raw stream events go through the pure
`StreamAssembler`; SDK exceptions become queryloop's typed errors (`errors_map`).

The attempt loop (hold-back of `message_start`, retries, mid-stream errors, abort) is the
shared stream driver (`driver.py`); this module only opens the stream and maps its errors.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

import anthropic

from ..abort import AbortSignal
from .assembler import StreamAssembler
from .base import ModelRequest, ProviderEvent
from .choice import keyless_base_url
from .driver import drive_stream
from .errors import AuthenticationError
from .errors_map import map_anthropic_error
from .retry import DEFAULT_RETRY, RetryPolicy
from .sdk_client import SDKClientProvider, split_sdk_kwargs
from .tls import shared_tls_context


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
        # A base URL without a key (a proxy that adds its own, a local server): send no
        # auth header instead of failing every request with "no credentials".
        keyless = client is None and keyless_base_url(api_key, base_url) is not None
        made = client or anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            timeout=timeout,
            default_headers=cast(Any, {"Authorization": anthropic.omit}) if keyless else None,
            http_client=anthropic.DefaultAsyncHttpxClient(verify=shared_tls_context()),
        )
        super().__init__(made, owns_client=client is None, retry=retry)

    def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[ProviderEvent]:
        """Stream `request`'s response as canonical events (see `ModelProvider`)."""
        return drive_stream(
            lambda: self._open(request), StreamAssembler, map_anthropic_error, self.retry, abort
        )

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
