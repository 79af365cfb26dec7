"""`capped_restore`: the one place a restore budget is capped to a share of a window."""

from __future__ import annotations

from dataclasses import fields

from compact_testkit import FakeSummarizer
from hypothesis import given
from hypothesis import strategies as st

from queryloop.compact import CompactConfig, CompactionPipeline, RestoreContext
from queryloop.compact.restore import (
    BELOW_THRESHOLD,
    WITHIN_SERVER_WINDOW,
    RestoreCaps,
    capped_restore,
)

BUDGETS = (
    "keep_tail_tokens",
    "file_budget_tokens",
    "per_file_max_tokens",
    "user_messages_budget_tokens",
)
_budget = st.integers(min_value=0, max_value=400_000)
_restores = st.builds(
    RestoreContext,
    keep_tail_tokens=_budget,
    file_budget_tokens=_budget,
    per_file_max_tokens=_budget,
    user_messages_budget_tokens=_budget,
    max_files=st.integers(0, 20),
)
_caps = st.builds(RestoreCaps, *(st.integers(1, 50) for _ in range(4)))


@given(_restores, st.integers(min_value=0, max_value=2_000_000), _caps)
def test_each_budget_is_its_share_of_the_window_or_less(
    restore: RestoreContext, window: int, caps: RestoreCaps
) -> None:
    capped = capped_restore(restore, window, caps)
    shares = (caps.keep_tail, caps.files, caps.per_file, caps.user_messages)
    for name, share in zip(BUDGETS, shares, strict=True):
        assert getattr(capped, name) == min(getattr(restore, name), window // share)
    for f in fields(RestoreContext):  # nothing else changes
        if f.name not in BUDGETS:
            assert getattr(capped, f.name) == getattr(restore, f.name)


@given(_restores, st.integers(min_value=0, max_value=2_000_000), _caps)
def test_capping_twice_changes_nothing(
    restore: RestoreContext, window: int, caps: RestoreCaps
) -> None:
    once = capped_restore(restore, window, caps)
    assert capped_restore(once, window, caps) == once


def test_the_two_callers_keep_their_shares() -> None:
    # The pipeline caps against its autocompact threshold, the reactive compaction against
    # the window the server reported: different bases, so different shares (issue 20 kept
    # both; they are now named instead of written out twice).
    assert BELOW_THRESHOLD == RestoreCaps(keep_tail=10, files=4, per_file=10, user_messages=20)
    assert WITHIN_SERVER_WINDOW == RestoreCaps(keep_tail=5, files=5, per_file=10, user_messages=10)


def test_the_pipeline_caps_below_its_threshold() -> None:
    cfg = CompactConfig(context_window=30_000, max_output_tokens=4_000, env={})
    pipe = CompactionPipeline(cfg, summarize=FakeSummarizer(), session_dir=None)
    threshold = pipe.thresholds.autocompact
    restored = pipe.restore_context()
    assert restored == capped_restore(cfg.restore, threshold, BELOW_THRESHOLD)
    assert restored.file_budget_tokens == min(cfg.restore.file_budget_tokens, threshold // 4)
