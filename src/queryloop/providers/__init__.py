"""queryloop.providers: the model seam (`ModelProvider`), canonical stream events and the
providers: Anthropic (official `anthropic` SDK) and OpenAI-compatible (official `openai` SDK).
The in-process scripted provider for tests is `queryloop.testing.ScriptedProvider`. See
docs/providers.md.

The SDK-backed providers load on first use (`queryloop.providers.AnthropicProvider` still
works): importing the loop or the Agent does not pay for SDKs a session never uses.
"""

from typing import TYPE_CHECKING, Any

from .assembler import StreamAssembler
from .base import (
    BlockComplete,
    BlockStart,
    InputJsonDelta,
    MessageComplete,
    MessageDelta,
    MessageStart,
    ModelProvider,
    ModelRequest,
    ModelResponse,
    ProviderEvent,
    RetryWait,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    complete,
)
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
    StreamAbortedError,
    StreamInterruptedError,
)
from .factory import choose_provider, provider_for, split_model_name
from .models import ModelInfo, cost_usd, get_model_info
from .retry import RetryPolicy

if TYPE_CHECKING:
    from .anthropic import AnthropicProvider
    from .openai_compat import OpenAICompatProvider

_LAZY = {
    "AnthropicProvider": ".anthropic",
    "OpenAICompatProvider": ".openai_compat",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "APIStatusError",
    "AnthropicProvider",
    "AuthenticationError",
    "BlockComplete",
    "BlockStart",
    "InputJsonDelta",
    "InvalidRequestError",
    "MediaError",
    "MessageComplete",
    "MessageDelta",
    "MessageStart",
    "ModelInfo",
    "ModelProvider",
    "ModelRequest",
    "ModelResponse",
    "NotFoundError",
    "OpenAICompatProvider",
    "OverloadedError",
    "PermissionDeniedError",
    "PromptTooLongError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderEvent",
    "ProviderTimeoutError",
    "RateLimitError",
    "RequestTooLargeError",
    "RetryPolicy",
    "RetryWait",
    "ServerError",
    "StreamAbortedError",
    "StreamAssembler",
    "StreamEvent",
    "StreamInterruptedError",
    "TextDelta",
    "ThinkingDelta",
    "choose_provider",
    "complete",
    "cost_usd",
    "get_model_info",
    "provider_for",
    "split_model_name",
]
