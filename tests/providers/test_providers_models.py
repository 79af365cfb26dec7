"""The model table and cost computation."""

from __future__ import annotations

import pytest

from queryloop.messages import ThinkingType
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


# -- request rules per model (issue 25.14, 25.16) --------------------------------------------

THINK_BY_DEFAULT = [
    "claude-fable-5-1",
    "claude-mythos-5-1",
    "claude-fable-5",
    "claude-mythos-5",
    "claude-opus-5-5",
    "claude-opus-5",
    "claude-sonnet-5-5",
    "claude-sonnet-5",
    "claude-haiku-5-5",
]
THINK_WHEN_ASKED = [
    "claude-opus-4-8",
    "claude-opus-4-7",
    "claude-opus-4-6",
    "claude-sonnet-4-6",
    "claude-opus-4-5",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
    "claude-3-7-sonnet",
]


def test_models_that_think_by_default_say_so() -> None:
    """The per-model table of Troubleshooting thinking (Default: "Always on"/"On"/"Off") and
    the Sonnet 5.5 migration guide ("Thinking without a `thinking` field: On")."""
    for name in THINK_BY_DEFAULT:
        assert get_model_info(name).default_thinking is ThinkingType.ADAPTIVE, name
    for name in THINK_WHEN_ASKED:
        assert get_model_info(name).default_thinking is ThinkingType.DISABLED, name
    assert get_model_info("my-local-llama").default_thinking is ThinkingType.DISABLED


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("us.anthropic.claude-opus-4-6-v1:0", "claude-opus-4-6"),
        ("anthropic.claude-sonnet-4-6", "claude-sonnet-4-6"),
        ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("claude-opus-4-6@20260205", "claude-opus-4-6"),
        ("claude-haiku-4-5@20251001", "claude-haiku-4-5"),
        ("eu.anthropic.claude-fable-5-1", "claude-fable-5-1"),
        ("anthropic/claude-opus-4.6", "claude-opus-4-6"),
    ],
)
def test_cloud_platform_ids_find_their_model(name: str, key: str) -> None:
    """Bedrock (`[region.]anthropic.<id>[-v1][:0]`) and Vertex (`<id>@<date>`) spellings."""
    info = get_model_info(name)
    assert info.known and info == MODELS[key]


def test_models_from_4_6_on_take_no_prefill_listed_or_not() -> None:
    """ "Prefilling is not supported on Claude 4.6 and later models and Claude Mythos Preview"
    (Using the Messages API): a model the table does not list follows its family and version."""
    for name in ("claude-opus-4-6", "claude-sonnet-4-6", "claude-haiku-5-5", "claude-opus-5-5"):
        assert not get_model_info(name).prefill, name
    for name in ("claude-mythos-preview", "claude-opus-4-9", "claude-sonnet-6", "claude-haiku-4-6"):
        info = get_model_info(name)
        assert not info.known and not info.prefill, name
    assert get_model_info("claude-sonnet-6-1").default_thinking is ThinkingType.ADAPTIVE
    assert get_model_info("claude-mythos-preview").default_thinking is ThinkingType.ADAPTIVE
    for name in ("claude-sonnet-4-5", "claude-haiku-4-5", "claude-3-5-haiku", "claude-3-opus"):
        assert get_model_info(name).prefill, name
    assert get_model_info("claude-3-opus-20240229").default_thinking is ThinkingType.DISABLED


def test_mid_conversation_system_messages_only_where_documented() -> None:
    """The feature's page lists the models that have it; Sonnet 5.5 and Haiku 5.5 are not
    among them (and Sonnet 5 is named as not having it)."""
    have = {k for k, info in MODELS.items() if info.mid_conversation_system}
    assert have == {
        "claude-fable-5-1",
        "claude-mythos-5-1",
        "claude-fable-5",
        "claude-mythos-5",
        "claude-opus-5-5",
        "claude-opus-5",
        "claude-opus-4-8",
    }
    assert all(info.mid_conversation_system is False for k, info in MODELS.items() if k not in have)
    assert get_model_info("my-local-llama").mid_conversation_system is None
