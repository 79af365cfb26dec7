"""Cache figures over whole sessions, against queryloop.testing's prompt-cache simulation.

Drives bench/cache.py's scripted sessions: through `queryloop.Agent` (the real query loop), and
through a request-level driver (RequestBuilder + attachments every turn) that can connect an
MCP server mid-session, which the Agent cannot do. Real HTTP, AnthropicProvider, the real Read
tool.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench" / "cache.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("queryloop_bench_cache", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


async def test_a_30_turn_agent_session_reads_at_least_90_percent_from_cache() -> None:
    bench = load_bench()
    report = await bench.run_agent_session(turns=30)
    assert len(report.usages) == 30
    assert report.violations == 0
    assert report.tools_changes == 0 and report.system_changes == 0
    assert report.read_share >= 0.90
    assert report.cost < bench.uncached_cost(report) / 3


async def test_a_30_turn_builder_session_reads_at_least_90_percent_from_cache() -> None:
    bench = load_bench()
    cached = await bench.run_session(turns=30)
    uncached = await bench.run_session(turns=30, cache_ttl=None)
    assert len(cached.usages) == 30
    assert cached.violations == 0 and uncached.violations == 0
    assert cached.read_share >= 0.90
    assert cached.total.total_input_tokens == uncached.total.total_input_tokens
    assert cached.cost < uncached.cost / 3


async def test_mcp_server_connecting_mid_session_keeps_the_cached_prefix() -> None:
    bench = load_bench()
    report = await bench.run_session(turns=20, connect_at=10)
    before, at = report.usages[9], report.usages[10]
    # Everything the request before the connection sent is read back from the cache.
    prefix_before = before.cache_read_input_tokens + before.cache_creation_input_tokens
    assert at.cache_read_input_tokens == prefix_before
    assert at.input_tokens == 0
    assert report.tools_changes == 0 and report.system_changes == 0
    assert report.violations == 0


async def test_loading_a_deferred_tool_rewrites_the_prefix_once() -> None:
    bench = load_bench()
    report = await bench.run_session(turns=20, connect_at=8, load_at=10)
    first_with_tool, next_one = report.usages[11], report.usages[12]
    assert first_with_tool.cache_read_input_tokens == 0  # tools lead the prefix: one rewrite
    assert next_one.cache_read_input_tokens == first_with_tool.cache_creation_input_tokens
    assert report.tools_changes == 1 and report.system_changes == 0
    assert report.violations == 0
