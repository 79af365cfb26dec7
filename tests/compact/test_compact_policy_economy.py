"""`compaction: "economy"` end to end: through `queryloop.Agent` over real HTTP, from the
settings files, the Agent option and the command line (issue 23, deliverable 2).

The 80-step acceptance run is `bench/long_session.py --driver agent --compare` (figures in
docs/benchmarks.md); here a 30-step session of the same shape keeps the test cheap.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from compact_testkit import long_session_bench

from queryloop.config import load_settings
from queryloop.config.settings import Settings


async def test_economy_costs_at_most_72_percent_of_default_and_keeps_every_fact(
    tmp_path: Path,
) -> None:
    bench = long_session_bench()
    reports = {}
    for name in ("default", "economy"):
        reports[name] = await bench.run_agent(
            turns=30,
            result_tokens=4_000,
            server_window=200_000,
            client_window=200_000,
            session_dir=tmp_path / name,
            compaction=name,
        )
    default, economy = reports["default"], reports["economy"]
    for report in (default, economy):
        assert report.terminal == "completed" and report.violations == 0
        assert report.fact_missing == 0  # task, first-message fact and the queued note
        assert report.latest_result_missing == 0
    assert economy.cost_usd <= 0.72 * default.cost_usd
    assert economy.cleared_results > 0 and default.cleared_results == 0
    assert economy.peak_request_tokens < default.peak_request_tokens / 3
    usage = economy.usage
    assert usage.cache_read_input_tokens < default.usage.cache_read_input_tokens / 2


async def test_the_setting_chooses_the_policy_and_the_option_wins(tmp_path: Path) -> None:
    bench = long_session_bench()
    cleared = {}
    for option in (None, "default"):
        folder = tmp_path / str(option)
        (folder / "home").mkdir(parents=True)
        (folder / "home" / "settings.json").write_text(json.dumps({"compaction": "economy"}))
        report = await bench.run_agent(
            turns=12,
            result_tokens=4_000,
            server_window=200_000,
            client_window=200_000,
            session_dir=folder,
            compaction=option,
        )
        assert report.terminal == "completed" and report.fact_missing == 0
        cleared[option] = report.cleared_results
    assert cleared[None] > 0  # economy from the user's settings: old results cleared early
    assert cleared["default"] == 0  # Agent(compaction="default") over the settings


def _settings(tmp_path: Path, value: object, *, trusted: bool = True) -> Settings:
    project = tmp_path / "project" / ".queryloop"
    project.mkdir(parents=True, exist_ok=True)
    (project / "settings.json").write_text(json.dumps({"compaction": value}, indent=2))
    return load_settings(tmp_path / "project", user_home=tmp_path / "home", trusted=trusted)


@pytest.mark.parametrize("value", ["economy", "default"])
def test_the_setting_is_read(tmp_path: Path, value: str) -> None:
    settings = _settings(tmp_path, value)
    assert settings.compaction == value
    assert settings.problems == ()


@pytest.mark.parametrize("value", ["cheap", 1, True])
def test_a_bad_value_stops_the_run_with_its_place(tmp_path: Path, value: object) -> None:
    settings = _settings(tmp_path, value)
    assert settings.compaction is None
    (error,) = settings.errors
    assert error.line == 2 and error.column == 3  # `"compaction"` in the indented file
    assert '"default" or "economy"' in error.message


def test_an_untrusted_project_cannot_choose_it(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "economy", trusted=False)
    assert settings.compaction is None
    assert any("compaction economy" in line for line in settings.ignored)
