"""Build the provider a model name needs (`provider_for`). Which one that is is decided in
`providers.choice` (the rules are in its docstring); the SDK of the chosen provider is imported
only here, when it is built, so choosing costs no SDK import."""

from __future__ import annotations

from collections.abc import Mapping

from .base import ModelProvider
from .choice import ProviderChoice, choose_provider, keyless_base_url, split_model_name
from .retry import DEFAULT_RETRY, RetryPolicy

__all__ = [
    "ProviderChoice",
    "choose_provider",
    "keyless_base_url",
    "provider_for",
    "split_model_name",
]


def provider_for(
    model: str | None = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    retry: RetryPolicy = DEFAULT_RETRY,
    env: Mapping[str, str] | None = None,
) -> ModelProvider:
    """Build the provider `model` needs (see the module doc); raises `ConfigError`."""
    choice = choose_provider(model, base_url=base_url, env=env)
    if choice.kind == "anthropic":
        from .anthropic import AnthropicProvider

        return AnthropicProvider(api_key=api_key, base_url=choice.base_url, retry=retry)
    from .openai_compat import OpenAICompatProvider

    return OpenAICompatProvider(base_url=choice.base_url, api_key=api_key, retry=retry)
