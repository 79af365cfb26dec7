"""queryloop.providers: the model seam (`ModelProvider`), canonical stream events and the
providers: Anthropic (official `anthropic` SDK), OpenAI-compatible (official `openai` SDK) and
an in-process scripted provider for tests. See docs/providers.md."""

from .anthropic import AnthropicProvider
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
from .openai_compat import OpenAICompatProvider
from .retry import RetryPolicy
from .scripted import ScriptedProvider

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
    "ProviderTimeoutError",
    "RateLimitError",
    "RequestTooLargeError",
    "RetryPolicy",
    "ScriptedProvider",
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
