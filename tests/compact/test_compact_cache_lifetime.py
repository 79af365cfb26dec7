"""Microcompact judges the cache cold by the lifetime the requests actually write (cacheTtl):
an hour-long entry is still warm twenty minutes after the last response."""

from __future__ import annotations

import time

from compact_testkit import FakeSummarizer, all_text, history, with_usage

from queryloop.compact import (
    CLEARED_PLACEHOLDER,
    AutoCompactTracking,
    CompactConfig,
    CompactionPipeline,
)
from queryloop.messages import Usage

SMALL = {"context_window": 30_000, "max_output_tokens": 4_000, "env": {}}


async def cleared_after_a_pause(lifetime_seconds: float | None) -> int:
    later = time.time() + 20 * 60  # twenty minutes after the last response
    pipe = CompactionPipeline(
        CompactConfig(**{**SMALL, "collapse_enabled": False, "keep_recent": 2}),  # type: ignore[arg-type]
        summarize=FakeSummarizer(),
        session_dir=None,
        now=lambda: later,
        cache_seconds=(lambda: lifetime_seconds) if lifetime_seconds is not None else None,
    )
    msgs = with_usage(history(30), Usage(input_tokens=12_000))
    out = await pipe.preprocess(msgs, AutoCompactTracking())
    return all_text(out.messages_for_query).count(CLEARED_PLACEHOLDER)


async def test_an_hour_long_cache_is_not_cleared_after_twenty_minutes() -> None:
    assert await cleared_after_a_pause(3600.0) == 0
    assert await cleared_after_a_pause(300.0) == 28
    assert await cleared_after_a_pause(None) == 28  # the configured 5 minutes
