"""End to end over real HTTP: long sessions against `queryloop.testing`'s Messages server.

The driver is `bench/long_session.py`'s minimal loop (pipeline -> request -> tool results,
prompt-too-long -> drain -> reactive), so these tests measure compaction itself.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    name = "queryloop_bench_long_session"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "long_session.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
async def test_80_turns_of_4k_results_complete_with_autocompact(tmp_path: Path) -> None:
    bench = _bench()
    report = await bench.run_mini(
        turns=80,
        result_tokens=4_000,
        server_window=200_000,
        client_window=200_000,
        session_dir=tmp_path,
        collapse=False,
    )
    assert report.terminal == "completed"
    assert report.compactions >= 1  # 320k tokens of results cannot fit without compacting
    assert report.violations == 0 and report.prompt_too_long == 0
    assert report.fact_missing == 0  # task and first-message fact in every request
    assert report.latest_result_missing == 0  # latest tool result verbatim in every request
    assert report.peak_request_tokens <= 200_000


@pytest.mark.slow
async def test_server_window_smaller_than_client_believes_is_recovered(tmp_path: Path) -> None:
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


@pytest.mark.slow
async def test_default_stages_drain_collapses_on_prompt_too_long(tmp_path: Path) -> None:
    bench = _bench()
    report = await bench.run_mini(
        turns=30,
        result_tokens=4_000,
        server_window=100_000,
        client_window=200_000,
        session_dir=tmp_path,
    )
    assert report.terminal == "completed"
    assert report.drains >= 1
    assert report.violations == 0 and report.fact_missing == 0
