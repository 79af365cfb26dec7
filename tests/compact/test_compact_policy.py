"""Compaction policies: the economy decision rule in numbers, and what each policy does to a
growing session (issue 23, deliverable 2)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from compact_testkit import FakeSummarizer, all_text, assert_valid, history, tool_round

from queryloop.compact import CLEARED_PLACEHOLDER, CompactConfig, CompactionPipeline
from queryloop.compact.microcompact import clear_results
from queryloop.compact.policy import (
    SONNET_PRICES,
    CachePrices,
    DefaultPolicy,
    EconomyPolicy,
    SummaryFacts,
    Trade,
    policy_named,
)
from queryloop.compact.restore import RestoreContext, preserved_tail, restored_tokens_bound
from queryloop.compact.tokens import estimate_message_tokens
from queryloop.compact.trades import LOOKBACK_BLOCKS, clearing_trade
from queryloop.errors import ConfigError
from queryloop.messages import Message, SystemMessage, ToolResultBlock, UserMessage
from queryloop.providers.models import get_model_info

FACT = "KIWI-42"
RESULT = "r" * 16_000  # 4,000 tokens by the pipeline's estimate, like the bench's results


def test_a_trade_in_dollars_at_sonnet_prices() -> None:
    """$0.30 read, $3.75 write, $15 output per million tokens."""
    assert SONNET_PRICES == CachePrices(cache_read=0.30, cache_write=3.75, output=15.0)
    clearing = Trade(freed=20_000, rewrite=8_000)
    assert clearing.cost(SONNET_PRICES) == pytest.approx(0.03)  # 8k written again
    assert clearing.saving_per_request(SONNET_PRICES) == pytest.approx(0.006)  # 20k not read
    assert not clearing.pays_off(SONNET_PRICES, 4)  # $0.024 saved < $0.03
    assert clearing.pays_off(SONNET_PRICES, 6)  # $0.036 saved >= $0.03
    assert not Trade(freed=0, rewrite=0).pays_off(SONNET_PRICES, 1_000)  # nothing to gain


def test_a_summary_in_dollars() -> None:
    """A 100k-token request whose history is 95k tokens, 20k of them old tool results that
    clearing would remove anyway; restoration puts back at most 13k, the summary 2k."""
    economy = EconomyPolicy()
    facts = SummaryFacts(
        request_tokens=100_000,
        history_tokens=95_000,
        clearable_tokens=20_000,
        restored_tokens=13_000,
    )
    trade = economy.summary_trade(facts)
    assert trade == Trade(freed=60_000, rewrite=15_000, extra_read=100_000, extra_output=2_000)
    # 100k read ($0.03) + 2k output ($0.03) + 15k written again ($0.05625) = $0.11625;
    # each later request saves 60k reads ($0.018): it pays off over 7 requests, not 6.
    assert trade.cost(SONNET_PRICES) == pytest.approx(0.11625)
    assert not economy.summarize_now(lambda: facts, requests=6)
    assert economy.summarize_now(lambda: facts, requests=7)


def test_expected_remaining_requests_is_the_stretch_so_far_with_a_floor() -> None:
    economy = EconomyPolicy(min_expected_requests=3)
    assert [economy.expected_requests(n) for n in (0, 1, 3, 10, 40)] == [3, 3, 3, 10, 40]
    trade = Trade(freed=20_000, rewrite=8_000)
    assert not economy.clear_now(lambda: trade, requests=4)
    assert economy.clear_now(lambda: trade, requests=5)


def test_prices_come_from_the_model_table() -> None:
    opus = get_model_info("claude-opus-4-5")
    prices = CachePrices.of(opus)
    assert prices.cache_read == opus.cache_read_price
    assert prices.cache_write == opus.cache_write_5m_price and prices.output == opus.output_price
    assert CachePrices.of(opus, one_hour_writes=True).cache_write == opus.cache_write_1h_price


def _boom() -> Trade:
    raise AssertionError("the default policy measures nothing")


def _boom_facts() -> SummaryFacts:
    raise AssertionError("the default policy measures nothing")


def test_the_default_policy_never_shrinks_early_and_changes_no_budget() -> None:
    default = DefaultPolicy()
    config = CompactConfig(env={})
    assert default.configure(config) is config
    assert not default.clear_now(_boom, requests=10**6)
    assert not default.summarize_now(_boom_facts, requests=10**6)
    assert policy_named("default") == default


def test_economy_tightens_the_budgets_and_never_loosens_them() -> None:
    config = CompactConfig(
        env={},
        per_tool_max_chars={"Read": 100_000, "Tiny": 1_000},
        policy=policy_named("economy"),
    )
    tight = EconomyPolicy().configure(config)
    assert tight.keep_recent == 2 and tight.default_max_chars == 30_000
    assert dict(tight.per_tool_max_chars) == {"Read": 30_000, "Tiny": 1_000}
    assert tight.per_message_max_chars == 100_000
    assert tight.restore.min_tail_rounds == 2  # a summary keeps the current step
    assert EconomyPolicy().configure(replace(config, keep_recent=1)).keep_recent == 1


def test_a_policy_is_chosen_by_name() -> None:
    prices = CachePrices(cache_read=0.1, cache_write=1.25, output=5.0)
    economy = policy_named("economy", prices)
    assert isinstance(economy, EconomyPolicy) and economy.prices == prices
    assert economy.name == "economy" and "economy" in economy.describe()
    with pytest.raises(ConfigError, match="default, economy"):
        policy_named("cheap")


# -- measuring a trade ----------------------------------------------------------------------


def _session(rounds: int, tool: str = "Bash") -> list[Message]:
    return history(rounds, first=f"Audit the modules. {FACT}", tool=tool, result=RESULT)


def _tokens(message: Message) -> int:
    return estimate_message_tokens(message)


def test_clearing_near_the_end_rewrites_from_the_round_before_the_change() -> None:
    view = _session(4)  # 1 + 4 rounds of 3 blocks (text, tool_use; tool_result): 13 blocks
    ids = ["toolu_0002"]  # the third result, message 6
    trade = clearing_trade(view, ids, cold=False, tokens=_tokens)
    cleared = clear_results(view, ids)
    assert trade.freed == _tokens(view[6]) - _tokens(cleared[6]) > 3_900
    # from the assistant message that called it: the last written prefix ends before it
    assert trade.rewrite == sum(map(_tokens, cleared[5:]))
    assert clearing_trade(view, ids, cold=True, tokens=_tokens).rewrite == 0  # expired anyway


def test_clearing_beyond_the_lookback_rewrites_every_message() -> None:
    """The API finds a cached prefix at most 20 blocks before the last breakpoint."""
    view = _session(10)  # 31 blocks
    trade = clearing_trade(view, ["toolu_0000"], cold=False, tokens=_tokens)
    assert sum(map(_tokens, view)) - trade.freed == trade.rewrite
    assert LOOKBACK_BLOCKS == 20


def test_a_summary_keeps_the_last_rounds_whatever_the_tail_budget() -> None:
    view = _session(6)
    assert preserved_tail(view, 0) == []
    kept = preserved_tail(view, 0, min_rounds=2)
    assert [m.uuid for m in kept] != [m.uuid for m in view[-4:]]  # fresh copies
    assert all_text(kept) == all_text(view[-4:])
    assert len(preserved_tail(view, 0, min_rounds=50)) == len(view) - 1  # all rounds there are


def test_restoration_bound_covers_the_rounds_a_summary_must_keep() -> None:
    view = _session(6)
    loose = restored_tokens_bound(view, RestoreContext(keep_tail_tokens=0))
    kept = restored_tokens_bound(view, RestoreContext(keep_tail_tokens=0, min_tail_rounds=2))
    assert kept - loose == sum(map(_tokens, view[-4:]))  # the last two rounds, verbatim


# -- a growing session under each policy ------------------------------------------------


async def _grow(policy: str, tool: str, steps: int) -> tuple[list[list[Message]], FakeSummarizer]:
    """Preprocess a session that grows by one 4k-token round per request, warm cache."""
    fake = FakeSummarizer("<summary>auditing, one module per step</summary>")
    config = CompactConfig(env={}, collapse_enabled=False, policy=policy_named(policy))
    pipeline = CompactionPipeline(config, summarize=fake, session_dir=None)
    messages: list[Message] = [history(0, first=f"Audit the modules. {FACT}")[0]]
    views: list[list[Message]] = []
    for step in range(steps):
        messages = [*messages, *tool_round(100 + step, tool=tool, result=RESULT)]
        out = await pipeline.preprocess(messages, None)
        messages = list(out.messages_for_query)
        views.append(messages)
    return views, fake


def _cleared(view: list[Message]) -> int:
    return all_text(view).count(CLEARED_PLACEHOLDER)


def _results(view: list[Message]) -> list[ToolResultBlock]:
    return [
        b
        for m in view
        if isinstance(m, UserMessage) and not isinstance(m.content, str)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]


async def test_economy_clears_old_results_while_the_cache_is_warm() -> None:
    """At 4k tokens per round, clearing the old results (20k after the 7th round) costs the
    ~8k still carried written again ($0.03) and saves $0.006 a request: it pays off over the
    7 requests so far. The default clears nothing this small while the cache is warm."""
    default, _ = await _grow("default", "Bash", 14)
    assert [_cleared(v) for v in default] == [0] * 14
    economy, fake = await _grow("economy", "Bash", 14)
    cleared = [_cleared(v) for v in economy]
    assert cleared[:6] == [0] * 6 and cleared[6] == 5  # all but the 2 newest, at request 7
    assert cleared[-1] > cleared[6]  # and again, as results pile up
    assert fake.calls == []  # clearing was cheaper than any summary
    for view in economy:
        assert FACT in all_text(view)
        newest = _results(view)[-2:]
        assert all(b.content == RESULT for b in newest)  # the current step stays verbatim
        assert_valid(view)


async def test_economy_summarises_early_what_clearing_cannot_free() -> None:
    """Results of a tool that is not clearable (a user's own tool) pile up; economy
    summarises once that pays off, far below the 167k threshold where the default would."""
    default, default_fake = await _grow("default", "Audit", 16)
    assert default_fake.calls == [] and _cleared(default[-1]) == 0
    economy, fake = await _grow("economy", "Audit", 16)
    assert len(fake.calls) >= 1
    summarised_at = next(i for i, v in enumerate(economy) if isinstance(v[0], SystemMessage))
    assert 5 <= summarised_at < 16  # ~40k tokens, a quarter of the threshold
    after = economy[summarised_at]
    assert FACT in all_text(after)  # the task, from the user's own first message
    kept = _results(after)
    assert [b.tool_use_id for b in kept[-2:]] == [
        f"toolu_{100 + summarised_at - 1:04d}",
        f"toolu_{100 + summarised_at:04d}",
    ]  # at least the two newest rounds verbatim: the current step
    assert all(b.content == RESULT for b in kept)
    assert_valid(after)
