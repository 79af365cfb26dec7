"""End to end over real HTTP: long sessions against `queryloop.testing`'s Messages server.

The driver is `bench/long_session.py`'s minimal loop (pipeline -> request -> tool results,
prompt-too-long -> drain -> reactive), so these tests measure compaction itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from compact_testkit import long_session_bench as _bench


@pytest.mark.slow
async def test_agent_80_turns_of_4k_results_complete(tmp_path: Path) -> None:
    """The issue's acceptance run, through `queryloop.Agent` and its query loop."""
    bench = _bench()
    report = await bench.run_agent(
        turns=80,
        result_tokens=4_000,  # 80 x 4k = 320k tokens of tool results against a 200k window
        server_window=200_000,
        client_window=200_000,
        session_dir=tmp_path,
    )
    assert report.terminal == "completed"
    assert report.violations == 0 and report.prompt_too_long == 0
    assert report.fact_missing == 0  # task and first-message fact in every request
    assert report.latest_result_missing == 0  # latest tool result verbatim in every request
    assert 150_000 < report.peak_request_tokens <= 200_000


@pytest.mark.slow
async def test_agent_recovers_when_the_server_window_is_smaller(tmp_path: Path) -> None:
    bench = _bench()
    report = await bench.run_agent(
        turns=30,
        result_tokens=4_000,
        server_window=60_000,
        client_window=200_000,
        session_dir=tmp_path,
    )
    assert report.terminal == "completed"
    assert report.prompt_too_long >= 1
    # Recovered by compaction; after the first refusal the pipeline knows the server's
    # window and compacts ahead of it (the compaction request itself may be refused once).
    assert report.drains + report.reactive_compactions >= 1
    assert report.compactions >= 1
    assert report.violations == 0 and report.fact_missing == 0
    assert report.latest_result_missing == 0


@pytest.mark.slow
async def test_autocompact_over_http_keeps_task_fact_and_latest_result(tmp_path: Path) -> None:
    bench = _bench()
    report = await bench.run_mini(
        turns=50,
        result_tokens=4_000,
        server_window=200_000,
        client_window=200_000,
        session_dir=tmp_path,
        collapse=False,
    )
    assert report.terminal == "completed"
    assert report.compactions >= 1  # 200k tokens of results cannot fit without compacting
    assert report.violations == 0 and report.prompt_too_long == 0
    assert report.fact_missing == 0 and report.latest_result_missing == 0
    assert report.peak_request_tokens <= 200_000


@pytest.mark.slow
async def test_reactive_compact_when_server_window_is_smaller(tmp_path: Path) -> None:
    bench = _bench()
    report = await bench.run_mini(
        turns=30,
        result_tokens=4_000,
        server_window=100_000,
        client_window=200_000,
        session_dir=tmp_path,
        collapse=False,
    )
    assert report.terminal == "completed"
    assert report.prompt_too_long >= 1 and report.reactive_compactions >= 1
    assert report.violations == 0 and report.fact_missing == 0
    assert report.latest_result_missing == 0
