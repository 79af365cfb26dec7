"""provider_for / choose_provider: arguments and environment pick the provider."""

from __future__ import annotations

import pytest

from queryloop.errors import ConfigError
from queryloop.providers import (
    AnthropicProvider,
    ModelProvider,
    OpenAICompatProvider,
    choose_provider,
    provider_for,
    split_model_name,
)


def test_prefixes_pick_openai_compatible() -> None:
    assert split_model_name("ollama:qwen2.5") == ("ollama", "qwen2.5")
    assert split_model_name("claude-opus-5-5") == (None, "claude-opus-5-5")
    choice = choose_provider("ollama:qwen2.5", env={})
    assert (choice.kind, choice.model, choice.base_url) == (
        "openai",
        "qwen2.5",
        "http://localhost:11434/v1",
    )
    choice = choose_provider("openai:llama3.1", env={"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"})
    assert (choice.kind, choice.model, choice.base_url) == (
        "openai",
        "llama3.1",
        "http://127.0.0.1:8000/v1",
    )


def test_claude_models_and_env_defaults() -> None:
    assert choose_provider("claude-sonnet-5-5", env={"ANTHROPIC_API_KEY": "k"}).kind == "anthropic"
    assert (
        choose_provider(
            None, env={"QUERYLOOP_MODEL": "sonnet", "ANTHROPIC_BASE_URL": "http://x"}
        ).model
        == "claude-sonnet-5-5"
    )
    assert choose_provider(None, env={"OPENAI_BASE_URL": "http://x/v1"}).kind == "openai"
    assert choose_provider("gpt-4o", env={"OPENAI_API_KEY": "k"}).kind == "openai"


@pytest.mark.parametrize(
    ("model", "env", "needle"),
    [
        (None, {}, "no model provider is configured"),
        ("claude-opus-5-5", {}, "ANTHROPIC_API_KEY"),
        ("llama3.1", {}, "ollama:llama3.1"),
        ("vllm:mistral", {}, "OPENAI_BASE_URL"),
    ],
)
def test_config_errors_say_what_to_set(model: str | None, env: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        choose_provider(model, env=env)


async def test_provider_for_builds_the_provider() -> None:
    anthropic_provider = provider_for(
        "claude-haiku-4-5", base_url="http://127.0.0.1:9", api_key="k", env={}
    )
    assert isinstance(anthropic_provider, AnthropicProvider)
    assert isinstance(anthropic_provider, ModelProvider)
    await anthropic_provider.aclose()
    openai_provider = provider_for("ollama:qwen2.5", env={})
    assert isinstance(openai_provider, OpenAICompatProvider)
    assert str(openai_provider.client.base_url).startswith("http://localhost:11434/v1")
    await openai_provider.aclose()
