"""Typed provider errors, grouped by what the caller can do about them.

ProviderError
├── APIStatusError               the API answered with an error status
│   ├── OverloadedError          529: retry, then fall back to another model
│   ├── RateLimitError           429: retry after `retry_after` seconds
│   ├── ServerError              500/502/503/504: retry
│   ├── PromptTooLongError       400: compact, never retry as is
│   ├── MediaError               400: an image or document the API refuses
│   ├── InvalidRequestError      400: a bug in the request; never retried
│   ├── RequestTooLargeError     413: the body exceeds the API's byte limit
│   ├── AuthenticationError      401: fix the API key
│   ├── PermissionDeniedError    403: the key may not use this model or feature
│   └── NotFoundError            404: unknown model or endpoint
├── ProviderConnectionError      the server could not be reached: retry
├── ProviderTimeoutError         no answer in time: retry
└── StreamInterruptedError       the stream broke after it started; carries completed blocks
    └── StreamAbortedError       the caller's AbortSignal stopped it
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import QueryloopError
from ..messages.blocks import AssistantContentBlock
from ..messages.usage import Usage


class ProviderError(QueryloopError):
    """A model call failed. `retryable` says whether the same request may simply be resent."""

    retryable: bool = False


class APIStatusError(ProviderError):
    """The API answered with an error status."""

    retry_after: float | None = None
    """Seconds the server asked to wait (`retry-after` / `retry-after-ms`), when it said so."""

    def __init__(self, message: str, *, status: int, request_id: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.request_id = request_id


class OverloadedError(APIStatusError):
    """529 overloaded."""

    retryable = True


class RateLimitError(APIStatusError):
    """429 rate limited; `retry_after` seconds when the server said so."""

    retryable = True

    def __init__(
        self,
        message: str,
        *,
        status: int = 429,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, status=status, request_id=request_id)
        self.retry_after = retry_after


class ServerError(APIStatusError):
    """A 5xx other than 529."""

    retryable = True


class PromptTooLongError(APIStatusError):
    """The prompt exceeds the model's context window."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        request_id: str | None = None,
        actual_tokens: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(message, status=status, request_id=request_id)
        self.actual_tokens = actual_tokens
        self.max_tokens = max_tokens


class MediaError(APIStatusError):
    """An image or document was refused (too large, bad format)."""


class InvalidRequestError(APIStatusError):
    """Any other 400: the request breaks an API rule."""


class RequestTooLargeError(APIStatusError):
    """413: the request body is over the API's size limit."""


class AuthenticationError(APIStatusError):
    """401: missing or invalid API key."""


class PermissionDeniedError(APIStatusError):
    """403: the key may not do this."""


class NotFoundError(APIStatusError):
    """404: unknown model or endpoint."""


class ProviderConnectionError(ProviderError):
    """The API could not be reached."""

    retryable = True


class ProviderTimeoutError(ProviderError):
    """The API did not answer in time."""

    retryable = True


class StreamInterruptedError(ProviderError):
    """The stream broke mid-message. `completed_blocks` arrived whole before the break."""

    def __init__(
        self,
        message: str,
        *,
        completed_blocks: Sequence[AssistantContentBlock] = (),
        message_id: str | None = None,
        usage: Usage | None = None,
    ) -> None:
        super().__init__(message)
        self.completed_blocks = tuple(completed_blocks)
        self.message_id = message_id
        self.usage = usage


class StreamAbortedError(StreamInterruptedError):
    """The caller's `AbortSignal` fired: the response was closed. `completed_blocks` as usual."""


def brief(error: ProviderError) -> str:
    """A few words for what went wrong, for a line that says a request is retried
    (`could not connect`, `overloaded (529)`); the error's message has the whole story."""
    if isinstance(error, ProviderConnectionError):
        return "could not connect"
    if isinstance(error, ProviderTimeoutError):
        return "no answer in time"
    if isinstance(error, APIStatusError):
        kind = {
            OverloadedError: "overloaded",
            RateLimitError: "rate limited",
            ServerError: "server error",
        }.get(type(error), "error")
        return f"{kind} ({error.status})"
    if isinstance(error, StreamInterruptedError):
        return "the stream broke off"
    return type(error).__name__
