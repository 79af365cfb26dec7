"""The cache lifetime (`cacheTtl`: 5m, 1h, auto), against the simulation's expiring cache."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from queryloop import Agent
from queryloop.context import RequestBuilder
from queryloop.context.cache_ttl import (
    AUTO_GAP_SECONDS,
    AUTO_WINDOW_SECONDS,
    CacheLifetime,
    parse_cache_ttl,
)
from queryloop.errors import ConfigError
from queryloop.messages import Message, Usage, assistant_message, user_message
from queryloop.providers.anthropic import AnthropicProvider
from queryloop.providers.base import complete
from queryloop.providers.models import cost_usd, get_model_info
from queryloop.testing import MessagesServer, text, turn

MODEL = "claude-sonnet-4-6"
MINUTE = 60.0


class Clock:
    """Simulated time, shared by the cache lifetime and the server's cache."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


# -- the rule -----------------------------------------------------------------------------


def test_fixed_lifetimes_never_change() -> None:
    clock = Clock()
    for setting in ("5m", "1h"):
        lifetime = CacheLifetime(setting, clock=clock)
        for gap in (1, 600, 1800, 7200):
            clock.now += gap
            assert lifetime.next_ttl() == setting


def test_auto_turns_to_an_hour_after_a_long_gap_and_back_after_an_hour_of_short_ones() -> None:
    clock = Clock()
    lifetime = CacheLifetime("auto", clock=clock)
    assert lifetime.current_ttl() == "5m"
    ttls = [lifetime.next_ttl()]
    for _ in range(5):  # a tool loop: seconds apart
        clock.now += 3
        ttls.append(lifetime.next_ttl())
    assert set(ttls) == {"5m"}
    clock.now += AUTO_GAP_SECONDS - 1  # not long enough
    assert lifetime.next_ttl() == "5m"
    clock.now += AUTO_GAP_SECONDS + 1  # a person reading the answer
    assert lifetime.next_ttl() == "1h"
    assert lifetime.seconds() == 3600
    for _ in range(int(AUTO_WINDOW_SECONDS // 120) - 1):  # an hour of requests 2 min apart
        clock.now += 120
        assert lifetime.next_ttl() == "1h"
    clock.now += 240
    assert lifetime.next_ttl() == "5m"  # the long gap is more than an hour old
    assert lifetime.seconds() == 300


def test_auto_ignores_gaps_that_outlive_an_hour_entry_too() -> None:
    clock = Clock()
    lifetime = CacheLifetime("auto", clock=clock)
    lifetime.next_ttl()
    clock.now += AUTO_WINDOW_SECONDS + 1
    assert lifetime.next_ttl() == "5m"


def test_auto_counts_the_gap_since_a_resumed_sessions_last_request() -> None:
    clock = Clock()
    resumed = CacheLifetime("auto", clock=clock, last_request_at=clock.now - 10 * MINUTE)
    assert resumed.next_ttl() == "1h"
    fresh = CacheLifetime("auto", clock=clock)
    assert fresh.next_ttl() == "5m"


def test_the_settings_values_and_a_bad_one() -> None:
    assert [parse_cache_ttl(v) for v in ("5m", "1h", "auto")] == ["5m", "1h", "auto"]
    with pytest.raises(ConfigError, match="5m, 1h, auto"):
        parse_cache_ttl("10m")


# -- against the simulation's expiring cache ----------------------------------------------


async def pauses(setting: str, gaps: list[float]) -> list[Usage]:
    """A conversation with a person who pauses `gaps` seconds before each next prompt; the
    same simulated clock drives the lifetime and the server's cache."""
    clock = Clock()
    script = [turn(text(f"Answer {i}. " + "detail " * 300)) for i in range(len(gaps) + 1)]
    history: list[Message] = []
    usages: list[Usage] = []
    with MessagesServer(script, clock=clock, strict=True) as server:
        builder = RequestBuilder(
            model=MODEL,
            system=[{"type": "text", "text": "You answer questions. " * 400}],
            cache_ttl=CacheLifetime(parse_cache_ttl(setting), clock=clock),
        )
        async with AnthropicProvider(api_key="k", base_url=server.base_url) as provider:
            for i, gap in enumerate([0.0, *gaps]):
                clock.now += gap
                history.append(user_message(f"Question {i}: " + "context " * 200))
                response = await complete(provider, builder.build(history, max_tokens=500))
                usages.append(response.usage)
                history.append(assistant_message(list(response.content)))
        assert all(v == [] for v in server.violations)
        markers = [
            json.dumps(b["system"][-1]["cache_control"]) for b in server.requests
        ]  # every request marks its system prompt
    assert all(
        ("1h" in m) == (u.cache_creation_1h_input_tokens > 0)
        for m, u in zip(markers, usages, strict=True)
        if u.cache_creation_input_tokens
    )
    return usages


async def test_a_five_minute_entry_expires_in_a_ten_minute_pause_and_an_hour_entry_does_not() -> (
    None
):
    short = await pauses("5m", [10 * MINUTE])
    long = await pauses("1h", [10 * MINUTE])
    # After the pause the 5-minute cache is gone: everything is written again.
    assert short[1].cache_read_input_tokens == 0
    assert short[1].cache_creation_input_tokens == short[1].total_input_tokens
    # The hour-long one is read back: all the first request sent.
    first = long[0]
    assert long[1].cache_read_input_tokens == first.total_input_tokens
    # Billed as the API bills them: 1-hour writes at twice the input price.
    info = get_model_info(MODEL)
    assert long[0].cache_creation_1h_input_tokens == long[0].cache_creation_input_tokens
    assert short[0].cache_creation_1h_input_tokens == 0
    assert cost_usd(
        Usage(cache_creation_input_tokens=1_000_000, cache_creation_1h_input_tokens=1_000_000),
        MODEL,
    ) == pytest.approx(2 * info.input_price)
    assert cost_usd(Usage(cache_creation_input_tokens=1_000_000), MODEL) == pytest.approx(
        1.25 * info.input_price
    )


async def test_an_hour_entry_expires_after_an_hour() -> None:
    usages = await pauses("1h", [61 * MINUTE])
    assert usages[1].cache_read_input_tokens == 0


async def test_auto_costs_what_the_better_fixed_lifetime_costs() -> None:
    """A slow human (six 10-minute pauses): auto learns from the first pause and then reads
    like 1h; a fast one (20-second pauses): auto writes like 5m."""

    def total(usages: list[Usage]) -> float:
        """What the prompts cost (the answers cost the same either way)."""
        return sum(cost_usd(replace(u, output_tokens=0), MODEL) for u in usages)

    slow = [10 * MINUTE] * 6
    auto, hour, five = [await pauses(s, slow) for s in ("auto", "1h", "5m")]
    assert auto[1].cache_read_input_tokens == 0  # the first pause is where it learns
    assert all(u.cache_read_input_tokens > 0 for u in auto[2:])
    assert total(auto) < total(five) * 0.6
    assert total(auto) < total(hour) * 1.25
    fast = [20.0] * 6
    auto_fast, five_fast = await pauses("auto", fast), await pauses("5m", fast)
    assert total(auto_fast) == pytest.approx(total(five_fast))
    assert all(u.cache_creation_1h_input_tokens == 0 for u in auto_fast)


# -- the setting, the option and the flag -------------------------------------------------


async def test_the_setting_and_the_option_choose_the_lifetime(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"cacheTtl": "1h"}))
    with MessagesServer([turn(text("one")), turn(text("two")), turn(text("three"))]) as server:
        results = []
        for option in (None, "5m"):
            kw = {"cache_ttl": option} if option else {}
            async with Agent(
                MODEL,
                base_url=server.base_url,
                cwd=tmp_path,
                home=home,
                **kw,  # type: ignore[arg-type]
            ) as agent:
                results.append(await agent.run("hello"))
        bodies = server.requests
    assert bodies[0]["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert bodies[1]["system"][-1]["cache_control"] == {"type": "ephemeral"}
    # The run's cost bills the 1-hour writes at their price (2x input, not 1.25x).
    hour, five = results[0].usage, results[1].usage
    assert hour.cache_creation_1h_input_tokens == hour.cache_creation_input_tokens > 0
    assert five.cache_creation_1h_input_tokens == 0
    info = get_model_info(MODEL)
    written = hour.cache_creation_input_tokens
    assert results[0].cost_usd == pytest.approx(
        (written * 2 * info.input_price + hour.output_tokens * info.output_price) / 1e6
        + hour.cache_read_input_tokens * info.cache_read_price / 1e6
        + hour.input_tokens * info.input_price / 1e6
    )


async def test_a_bad_setting_stops_the_run_and_an_untrusted_projects_is_ignored(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text(json.dumps({"cacheTtl": "forever"}))
    with MessagesServer([turn(text("one"))]) as server:
        agent = Agent(MODEL, base_url=server.base_url, cwd=tmp_path, home=home)
        with pytest.raises(ConfigError, match=r"settings.json:1:2: 'cacheTtl'.*forever"):
            await agent.start()
        await agent.aclose()
        (home / "settings.json").write_text("{}")
        project = tmp_path / ".queryloop"
        project.mkdir()
        (project / "settings.json").write_text(json.dumps({"cacheTtl": "1h"}))
        notices: list[str] = []
        async with Agent(
            MODEL, base_url=server.base_url, cwd=tmp_path, home=home, on_notice=notices.append
        ) as untrusted:
            await untrusted.run("hello")
        body = server.requests[0]
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert any("not trusted" in n and "cacheTtl" in n for n in notices), notices
