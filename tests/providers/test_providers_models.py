"""The model table and cost computation."""

from __future__ import annotations

import pytest

from queryloop.messages.usage import Usage
from queryloop.providers.models import MODELS, cost_usd, get_model_info


def test_aliases_dated_ids_and_unknown() -> None:
    assert get_model_info("claude-sonnet-4-5-20250929").id == "claude-sonnet-4-5"
    assert get_model_info("claude-opus-4-20250514").id == "claude-opus-4"
    assert get_model_info("claude-opus-4-1-20250805").id == "claude-opus-4-1"
    assert get_model_info("anthropic/claude-opus-4-6[1m]").id == "claude-opus-4-6"
    assert get_model_info("claude-3-7-sonnet-latest").id == "claude-3-7-sonnet"
    assert get_model_info("sonnet").known
    unknown = get_model_info("my-local-llama")
    assert not unknown.known and unknown.id == "my-local-llama"
    assert unknown.context_window <= 200_000


def test_table_is_consistent() -> None:
    for info in MODELS.values():
        assert info.default_output_tokens <= info.max_output_tokens < info.context_window
        assert (
            info.cache_read_price
            < info.input_price
            < info.cache_write_5m_price
            < info.cache_write_1h_price
        )
        assert info.cache_write_5m_price == pytest.approx(info.input_price * 1.25)
        assert info.cache_write_1h_price == pytest.approx(info.input_price * 2)
    assert get_model_info("claude-haiku-4-5").min_cacheable_tokens == 4096
    assert get_model_info("claude-opus-4-1").output_price == 75.0


def test_cost_counts_every_kind_of_token() -> None:
    usage = Usage(
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_creation_input_tokens=2_000_000,
        cache_read_input_tokens=1_000_000,
        cache_creation_1h_input_tokens=1_000_000,
    )
    # Sonnet 4.5: $3 in, $15 out, $3.75 5m write, $6 1h write, $0.30 read.
    assert cost_usd(usage, "claude-sonnet-4-5") == pytest.approx(3 + 15 + 3.75 + 6 + 0.30)
    assert cost_usd(Usage(), "claude-opus-5-5") == 0.0
