"""Thresholds: the reference numbers, and user overrides honoured exactly and reported."""

from __future__ import annotations

import pytest

from queryloop.compact import ENV_PCT_OVERRIDE, CompactThresholds
from queryloop.errors import ConfigError


def test_reference_numbers_for_200k_window_and_64k_output() -> None:
    t = CompactThresholds.for_model(200_000, 64_000, env={})
    assert t.effective_window == 180_000
    assert t.autocompact == 167_000
    assert t.warning == 147_000
    assert t.blocking == 177_000
    assert "default" in t.describe() and "167,000" in t.describe()


def test_small_max_output_reserves_only_that_much() -> None:
    t = CompactThresholds.for_model(200_000, 8_000, env={})
    assert t.effective_window == 192_000
    assert t.autocompact == 179_000


def test_user_pct_override_is_honoured_exactly_even_above_default() -> None:
    t = CompactThresholds.for_model(200_000, 64_000, override=95, env={})
    assert t.autocompact == 171_000  # 95% of 180k: above the 167k default, not clamped
    assert t.requested == 171_000
    assert "set by the caller" in t.describe() and "171,000" in t.describe()
    low = CompactThresholds.for_model(200_000, 64_000, override=10, env={})
    assert low.autocompact == 18_000


def test_env_override_is_read_and_named_in_the_description() -> None:
    t = CompactThresholds.for_model(200_000, 64_000, env={ENV_PCT_OVERRIDE: "50"})
    assert t.autocompact == 90_000
    assert ENV_PCT_OVERRIDE in t.describe()


def test_override_above_blocking_limit_is_capped_with_explicit_warning() -> None:
    t = CompactThresholds.for_model(200_000, 64_000, override_tokens=190_000, env={})
    assert t.autocompact == t.blocking == 177_000
    assert t.requested == 190_000
    assert t.warnings and "blocking limit" in t.warnings[0]
    assert "WARNING" in t.describe() and "190,000" in t.describe()


def test_invalid_env_value_is_a_config_error_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match=ENV_PCT_OVERRIDE):
        CompactThresholds.for_model(200_000, 64_000, env={ENV_PCT_OVERRIDE: "lots"})
    with pytest.raises(ConfigError):
        CompactThresholds.for_model(200_000, 64_000, override=150, env={})


def test_small_windows_keep_room_to_work() -> None:
    """A local model with an 8k window: reserves shrink with the window instead of
    swallowing it, and the order autocompact < blocking < window holds."""
    t = CompactThresholds.for_model(8_000, 4_096, env={})
    assert t.effective_window == 6_000
    assert 0 < t.autocompact < t.blocking < t.context_window
    assert t.autocompact >= t.effective_window // 2


async def test_the_pipeline_learns_a_smaller_server_window() -> None:
    from queryloop.compact import CompactConfig, CompactionPipeline
    from queryloop.providers.errors import PromptTooLongError

    async def summarize(messages: object, instruction: str) -> str:
        return "<summary>s</summary>"

    pipe = CompactionPipeline(
        CompactConfig(context_window=200_000, max_output_tokens=64_000, env={}),
        summarize=summarize,
        session_dir=None,
    )
    before = pipe.thresholds.autocompact
    error = PromptTooLongError(
        "prompt is too long: 70000 tokens > 60000 maximum", actual_tokens=70_000, max_tokens=60_000
    )
    await pipe.reactive([], error)
    assert pipe.config.context_window == 60_000
    assert pipe.thresholds.autocompact < 60_000 < before
