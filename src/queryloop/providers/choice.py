"""Which provider a model name needs: the decision alone, no SDK imported (`choose_provider`).

Rules, first match wins:
1. A prefixed model name picks the OpenAI-compatible provider: `openai:gpt-4o`, `ollama:qwen2.5`
   (base URL defaults to Ollama's `http://localhost:11434/v1`), `vllm:NAME`, `llamacpp:NAME`,
   `lmstudio:NAME`. `anthropic:NAME` picks Anthropic.
2. A Claude model (`claude-...`, or an alias such as `sonnet`, resolved to its id) picks
   Anthropic.
3. Another model name picks the OpenAI-compatible provider when OPENAI_BASE_URL/OPENAI_API_KEY
   or `base_url` is set.
4. No model: Anthropic when ANTHROPIC_API_KEY/ANTHROPIC_BASE_URL is set, else OpenAI-compatible
   when OPENAI_BASE_URL/OPENAI_API_KEY is set.
Otherwise a `ConfigError` says what to set. The model comes from `model`, then QUERYLOOP_MODEL.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ConfigError
from .models import ALIASES, MODELS

OPENAI_PREFIXES = {
    "openai": None,
    "ollama": "http://localhost:11434/v1",
    "vllm": None,
    "llamacpp": None,
    "lmstudio": "http://localhost:1234/v1",
}


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """Which provider to build: `kind` is "anthropic" or "openai"; `model` is the bare name."""

    kind: str
    model: str | None
    base_url: str | None


def split_model_name(name: str) -> tuple[str | None, str]:
    """`"ollama:qwen2.5"` → `("ollama", "qwen2.5")`; an unprefixed name → `(None, name)`."""
    prefix, sep, rest = name.partition(":")
    if sep and prefix.lower() in (*OPENAI_PREFIXES, "anthropic") and rest:
        return prefix.lower(), rest
    return None, name


def _is_claude(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("claude") or lowered in ALIASES


def choose_provider(
    model: str | None = None,
    *,
    base_url: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ProviderChoice:
    """Decide (without building anything) which provider `model` needs; see the module doc."""
    env = os.environ if env is None else env
    name = model or env.get("QUERYLOOP_MODEL") or None
    anthropic_ready = bool(env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_BASE_URL"))
    openai_ready = bool(env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_KEY"))
    if name is not None:
        prefix, bare = split_model_name(name)
        if prefix == "anthropic":
            return _anthropic(bare, base_url, anthropic_ready)
        if prefix is not None:
            url = base_url or env.get("OPENAI_BASE_URL") or OPENAI_PREFIXES[prefix]
            if url is None and not (prefix == "openai" and env.get("OPENAI_API_KEY")):
                raise ConfigError(
                    f"model {name!r} needs a server: set OPENAI_BASE_URL (for example "
                    "http://localhost:8000/v1) or pass base_url="
                )
            return ProviderChoice("openai", bare, url)
        if _is_claude(name):
            # Aliases people type (`sonnet`) become the model id the API knows.
            return _anthropic(ALIASES.get(name.lower(), name), base_url, anthropic_ready)
        if base_url or openai_ready:
            return ProviderChoice("openai", name, base_url or env.get("OPENAI_BASE_URL"))
        raise ConfigError(_not_claude_message(name))
    if anthropic_ready or base_url:
        return ProviderChoice("anthropic", None, base_url)
    if openai_ready:
        return ProviderChoice("openai", None, env.get("OPENAI_BASE_URL"))
    raise ConfigError(
        "no model provider is configured: set ANTHROPIC_API_KEY for Claude, or OPENAI_BASE_URL "
        "(and OPENAI_API_KEY) for an OpenAI-compatible server, or pass a model such as "
        "'ollama:qwen2.5' (QUERYLOOP_MODEL sets the default model)"
    )


def _not_claude_message(name: str) -> str:
    """An unknown model name with no OpenAI-compatible server: most often a typo of an alias
    (`sonet`), so the closest alias (or model id) comes first, the local-model hint after."""
    other = (
        "set OPENAI_BASE_URL (and OPENAI_API_KEY if it needs one), or write the model as "
        f"'ollama:{name}'"
    )
    close = difflib.get_close_matches(name.lower(), ALIASES, n=1, cutoff=0.6) or (
        difflib.get_close_matches(name.lower(), MODELS, n=1, cutoff=0.8)
    )
    if close:
        return (
            f"model {name!r} is not a model queryloop knows: did you mean {close[0]!r}? "
            f"(For a model on an OpenAI-compatible server, {other}.)"
        )
    return (
        f"model {name!r} is not a Claude model and no OpenAI-compatible server is "
        f"configured: {other}"
    )


def _anthropic(model: str, base_url: str | None, ready: bool) -> ProviderChoice:
    if not (ready or base_url):
        raise ConfigError(
            f"model {model!r} needs the Anthropic API: set ANTHROPIC_API_KEY (or "
            "ANTHROPIC_BASE_URL for a proxy or a local test server)"
        )
    return ProviderChoice("anthropic", model, base_url)


def keyless_base_url(
    api_key: str | None = None, base_url: str | None = None, env: Mapping[str, str] | None = None
) -> str | None:
    """The base URL when one is set but no credential is (no api_key, ANTHROPIC_API_KEY or
    ANTHROPIC_AUTH_TOKEN): requests then go there without a key. None otherwise."""
    env = os.environ if env is None else env
    if api_key or env.get("ANTHROPIC_API_KEY") or env.get("ANTHROPIC_AUTH_TOKEN"):
        return None
    return base_url or env.get("ANTHROPIC_BASE_URL") or None
