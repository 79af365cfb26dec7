"""SDK exceptions → queryloop's typed provider errors (shared by both providers)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .errors import (
    APIStatusError,
    AuthenticationError,
    InvalidRequestError,
    MediaError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    PromptTooLongError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    RequestTooLargeError,
    ServerError,
)
from .retry import parse_retry_after

PROMPT_TOO_LONG = re.compile(r"prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)\s*maximum", re.I)
OPENAI_CONTEXT = re.compile(
    r"maximum context length is (\d+) tokens.*?(?:resulted in|requested) (\d+) tokens", re.I | re.S
)
_MEDIA_WORDS = ("image", "document", "pdf", "media")


def classify_status(
    status: int,
    message: str,
    *,
    error_type: str | None = None,
    code: str | None = None,
    request_id: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> APIStatusError:
    """The typed error for an HTTP error status (or an SSE `error` event's type)."""
    retry_after = parse_retry_after(headers or {})
    error = _classify(status, message, error_type or "", code or "", request_id, retry_after)
    if retry_after is not None:
        error.retry_after = retry_after
    return error


def _classify(
    status: int,
    message: str,
    error_type: str,
    code: str,
    request_id: str | None,
    retry_after: float | None,
) -> APIStatusError:
    if status == 529 or error_type == "overloaded_error":
        return OverloadedError(
            message, status=529 if status < 400 else status, request_id=request_id
        )
    if status == 429 or error_type in ("rate_limit_error", "rate_limit_exceeded"):
        return RateLimitError(message, request_id=request_id, retry_after=retry_after)
    if status == 413 or error_type == "request_too_large":
        return RequestTooLargeError(message, status=413, request_id=request_id)
    if status == 401 or error_type == "authentication_error":
        return AuthenticationError(message, status=401, request_id=request_id)
    if status == 403 or error_type == "permission_error":
        return PermissionDeniedError(message, status=403, request_id=request_id)
    if status == 404 or error_type == "not_found_error":
        return NotFoundError(message, status=404, request_id=request_id)
    if status >= 500 or error_type == "api_error" or status < 400:
        return ServerError(message, status=status if status >= 500 else 500, request_id=request_id)
    too_long = prompt_too_long(message, code)
    if too_long is not None:
        actual, maximum = too_long
        return PromptTooLongError(
            message, status=status, request_id=request_id, actual_tokens=actual, max_tokens=maximum
        )
    if status == 400 and any(word in message.lower() for word in _MEDIA_WORDS):
        return MediaError(message, status=status, request_id=request_id)
    if status in (400, 422):
        return InvalidRequestError(message, status=status, request_id=request_id)
    return APIStatusError(message, status=status, request_id=request_id)


def prompt_too_long(message: str, code: str = "") -> tuple[int | None, int | None] | None:
    """(actual, maximum) tokens when `message` says the prompt is over the context window."""
    match = PROMPT_TOO_LONG.search(message)
    if match:
        return int(match.group(1)), int(match.group(2))
    match = OPENAI_CONTEXT.search(message)
    if match:
        return int(match.group(2)), int(match.group(1))
    lowered = message.lower()
    if (
        code == "context_length_exceeded"
        or "prompt is too long" in lowered
        or "maximum context length" in lowered
        or ("context length" in lowered and "exceed" in lowered)
    ):
        return None, None
    return None


def _body_error(body: object) -> Mapping[str, Any]:
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping):
            return inner
    return {}


def map_anthropic_error(exc: BaseException) -> ProviderError:
    """Map an `anthropic` SDK (or transport) exception to a typed `ProviderError`."""
    import anthropic

    return _map_sdk_error(exc, anthropic, "Anthropic")


def map_openai_error(exc: BaseException) -> ProviderError:
    """Map an `openai` SDK (or transport) exception to a typed `ProviderError`."""
    import openai

    known = (openai.APITimeoutError, openai.APIConnectionError, openai.APIStatusError)
    if isinstance(exc, openai.APIError) and not isinstance(exc, known):
        # An error object inside a 200 stream (some local servers report overloads so).
        error = _body_error(exc.body)
        message = str(error.get("message") or exc.message)
        code = str(error.get("code") or error.get("type") or "")
        return classify_status(200, message, error_type=code, code=code)
    return _map_sdk_error(exc, openai, "OpenAI-compatible")


def _map_sdk_error(exc: BaseException, sdk: Any, api: str) -> ProviderError:
    """Both official SDKs are generated alike: the same exception classes by name."""
    if isinstance(exc, ProviderError):
        return exc
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderTimeoutError(
            f"the {api} API did not answer in time{_where(exc)}: {exc}{_check(api)}"
        )
    if isinstance(exc, sdk.APIConnectionError):
        cause = f" ({exc.__cause__})" if exc.__cause__ and str(exc.__cause__) else ""
        return ProviderConnectionError(
            f"could not reach the {api} API{_where(exc)}: {exc}{cause}{_check(api)}"
        )
    if isinstance(exc, sdk.APIStatusError):
        error = _body_error(exc.body)
        message = str(error.get("message") or exc.message)
        return classify_status(
            exc.status_code,
            message,
            error_type=str(error.get("type") or ""),
            code=str(error.get("code") or ""),
            request_id=exc.request_id,
            headers=exc.response.headers,
        )
    return _transport_error(exc, api)


def _where(exc: BaseException) -> str:
    """` at URL` of the request that failed (the SDKs attach it), else ""."""
    url = getattr(getattr(exc, "request", None), "url", None)
    return f" at {url}" if url else ""


def _check(api: str) -> str:
    """What to check when the server could not be reached (the CLI shows it as is)."""
    variable = "ANTHROPIC_BASE_URL" if api == "Anthropic" else "OPENAI_BASE_URL"
    return (
        f". Check the address ({variable}, or the default endpoint when unset), that the "
        "server is running, and your network or proxy settings"
    )


def _transport_error(exc: BaseException, api: str) -> ProviderError:
    name = type(exc).__name__
    if "timeout" in name.lower():
        return ProviderTimeoutError(f"the {api} API timed out: {name}: {exc}")
    return ProviderConnectionError(f"the connection to the {api} API failed: {name}: {exc}")
