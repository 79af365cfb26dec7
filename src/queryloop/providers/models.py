"""What queryloop knows about Claude models: limits and prices, so every session knows its cost.

Source: the Claude platform docs (models overview, per-model pages and the pricing page), as
stored in November 2026. Prices are USD per million tokens. The pricing rule of thumb is a
5-minute cache write at 1.25x input, a 1-hour write at 2x and a cache read at 0.1x, but several
recent models differ (cache reads at 0.05x or 0.025x), so every price is written out.

Lookup (`get_model_info`) accepts aliases (`claude-sonnet-4-5`), dated ids
(`claude-sonnet-4-5-20250929`), `[1m]` suffixes, provider prefixes (`anthropic/...`) and the
cloud platforms' spellings (Bedrock `us.anthropic.claude-opus-4-6-v1:0`, Vertex
`claude-opus-4-6@20260205`): the longest known id that the name starts with wins. An unknown
model gets conservative limits and Sonnet-class prices with `known=False`; when it is a Claude
model, its request rules (prefill, default thinking) follow its family and version.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..messages.thinking_mode import ThinkingType
from ..messages.usage import Usage
from .model_rules import canonical_id, infer_rules, rules_of

MTOK = 1_000_000
WEB_SEARCH_PRICE_USD = 10.0 / 1_000
"""The server-side web search tool's price per search: $10 per 1,000 searches, on top of the
tokens its results add (Claude platform pricing page, "Web search tool")."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """Limits and prices of one model (prices in USD per million tokens)."""

    id: str
    context_window: int
    default_output_tokens: int
    max_output_tokens: int
    min_cacheable_tokens: int
    input_price: float
    cache_write_5m_price: float
    cache_write_1h_price: float
    cache_read_price: float
    output_price: float
    known: bool = True
    prefill: bool = True
    """Whether a final assistant message (prefill) is accepted (not from Claude 4.6 on)."""
    mid_conversation_system: bool | None = False
    """Whether role "system" messages inside `messages` are accepted (None: not documented)."""
    default_thinking: ThinkingType = ThinkingType.DISABLED
    """The thinking the model runs when a request sets no `thinking` (ADAPTIVE: on)."""


def _info(
    id: str,
    context: int,
    max_out: int,
    min_cache: int,
    price_in: float,
    price_out: float,
    *,
    read: float | None = None,
    default_out: int | None = None,
) -> ModelInfo:
    return ModelInfo(
        id=id,
        context_window=context,
        default_output_tokens=default_out if default_out is not None else min(max_out, 32_000),
        max_output_tokens=max_out,
        min_cacheable_tokens=min_cache,
        input_price=price_in,
        cache_write_5m_price=round(price_in * 1.25, 6),
        cache_write_1h_price=round(price_in * 2.0, 6),
        cache_read_price=read if read is not None else round(price_in * 0.1, 6),
        output_price=price_out,
    )


_K = 1_000
_M = 1_000_000

# Minimum cacheable lengths the docs do not state for the newest models are assumed to be the
# family's latest stated value (512 for the 5.x generation).
MODELS: dict[str, ModelInfo] = {
    m.id: m
    for m in (
        _info("claude-fable-5-1", _M, 128 * _K, 512, 10.0, 50.0, read=0.25),
        _info("claude-fable-5", _M, 128 * _K, 512, 10.0, 50.0, read=1.0),
        _info("claude-mythos-5-1", _M, 128 * _K, 512, 10.0, 50.0, read=0.25),
        _info("claude-mythos-5", _M, 128 * _K, 512, 10.0, 50.0, read=1.0),
        _info("claude-opus-5-5", _M, 128 * _K, 512, 4.0, 20.0, read=0.20),
        _info("claude-opus-5", _M, 128 * _K, 512, 5.0, 25.0),
        _info("claude-sonnet-5-5", _M, 128 * _K, 512, 2.0, 10.0, read=0.10),
        _info("claude-sonnet-5", _M, 128 * _K, 1024, 2.0, 10.0),
        # Haiku 5.5 is priced in two bands; this is the band for prompts up to 100k tokens.
        _info("claude-haiku-5-5", _M, 128 * _K, 512, 0.10, 0.50),
        _info("claude-opus-4-8", _M, 128 * _K, 1024, 5.0, 25.0),
        _info("claude-opus-4-7", _M, 128 * _K, 2048, 5.0, 25.0),
        _info("claude-opus-4-6", _M, 128 * _K, 4096, 5.0, 25.0),
        _info("claude-opus-4-5", 200 * _K, 64 * _K, 4096, 5.0, 25.0),
        _info("claude-opus-4-1", 200 * _K, 32 * _K, 1024, 15.0, 75.0),
        _info("claude-opus-4-0", 200 * _K, 32 * _K, 1024, 15.0, 75.0),
        _info("claude-opus-4", 200 * _K, 32 * _K, 1024, 15.0, 75.0),
        _info("claude-sonnet-4-6", _M, 128 * _K, 1024, 3.0, 15.0),
        _info("claude-sonnet-4-5", 200 * _K, 64 * _K, 1024, 3.0, 15.0),
        _info("claude-sonnet-4-0", 200 * _K, 64 * _K, 1024, 3.0, 15.0),
        _info("claude-sonnet-4", 200 * _K, 64 * _K, 1024, 3.0, 15.0),
        _info("claude-haiku-4-5", 200 * _K, 64 * _K, 4096, 1.0, 5.0),
        _info("claude-3-7-sonnet", 200 * _K, 64 * _K, 1024, 3.0, 15.0),
        _info("claude-3-5-haiku", 200 * _K, 8192, 2048, 0.80, 4.0, default_out=8192),
        _info("claude-3-haiku", 200 * _K, 4096, 2048, 0.25, 1.25, default_out=4096),
    )
}

# What a request may carry on each model (checked by `messages.validate_api_request`;
# model_rules.py and docs/providers.md cite the sources).
MODELS = {
    key: replace(
        info,
        prefill=rules.prefill,
        mid_conversation_system=rules.mid_conversation_system,
        default_thinking=rules.default_thinking,
    )
    for key, info in MODELS.items()
    for rules in (rules_of(key),)
}

# Short aliases people type (the CLI's --model accepts them).
ALIASES: dict[str, str] = {
    "opus": "claude-opus-5-5",
    "sonnet": "claude-sonnet-5-5",
    "haiku": "claude-haiku-5-5",
    "fable": "claude-fable-5-1",
}


def model_for(requested: str | None, current: str, provider: str) -> str:
    """The model a subagent or a command asks for, on a session that runs `current` through
    `provider` (its name): None or `inherit` → `current`; an alias (`haiku`) → its id on an
    Anthropic session, else `current` (another provider has no such model)."""
    if not requested or requested == "inherit":
        return current
    if requested in ALIASES:
        return ALIASES[requested] if provider == "anthropic" else current
    return requested


UNKNOWN = ModelInfo(
    id="unknown",
    context_window=200 * _K,
    default_output_tokens=8192,
    max_output_tokens=32 * _K,
    min_cacheable_tokens=1024,
    input_price=3.0,
    cache_write_5m_price=3.75,
    cache_write_1h_price=6.0,
    cache_read_price=0.30,
    output_price=15.0,
    known=False,
    mid_conversation_system=None,
)

_BY_LENGTH = sorted(MODELS, key=len, reverse=True)


def get_model_info(name: str) -> ModelInfo:
    """Limits and prices for `name` (alias, dated id, `[1m]` suffix, a cloud platform's
    spelling). A model the table does not list gets `known=False` and conservative limits;
    an unlisted Claude model's request rules follow its family and version."""
    key = canonical_id(name)
    key = ALIASES.get(key, key)
    if key in MODELS:
        return MODELS[key]
    for candidate in _BY_LENGTH:
        # "claude-opus-4-20250514" starts with "claude-opus-4" followed by "-<date>".
        if (
            key.startswith(candidate + "-")
            and key[len(candidate) + 1 : len(candidate) + 2].isdigit()
        ):
            rest = key[len(candidate) + 1 :]
            if len(rest.split("-", 1)[0]) >= 8:
                return MODELS[candidate]
        if key == candidate + "-latest":
            return MODELS[candidate]
    rules = infer_rules(key)
    if rules is None:
        return replace(UNKNOWN, id=name)
    return replace(
        UNKNOWN,
        id=name,
        prefill=rules.prefill,
        mid_conversation_system=rules.mid_conversation_system,
        default_thinking=rules.default_thinking,
    )


def cost_usd(usage: Usage, model: str) -> float:
    """What `usage` cost on `model`, in USD. 1-hour cache writes are priced at their own rate;
    server-side web searches at `WEB_SEARCH_PRICE_USD` each."""
    info = get_model_info(model)
    one_hour = min(usage.cache_creation_1h_input_tokens, usage.cache_creation_input_tokens)
    five_min = usage.cache_creation_input_tokens - one_hour
    total = (
        usage.input_tokens * info.input_price
        + five_min * info.cache_write_5m_price
        + one_hour * info.cache_write_1h_price
        + usage.cache_read_input_tokens * info.cache_read_price
        + usage.output_tokens * info.output_price
    )
    return total / MTOK + usage.web_search_requests * WEB_SEARCH_PRICE_USD


def uncached_cost_usd(usage: Usage, model: str) -> float:
    """What the same request would have cost without prompt caching: every prompt token
    (uncached, written and read) at the input price, and the output."""
    info = get_model_info(model)
    tokens = usage.total_input_tokens * info.input_price + usage.output_tokens * info.output_price
    return tokens / MTOK + usage.web_search_requests * WEB_SEARCH_PRICE_USD
