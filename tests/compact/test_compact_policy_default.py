"""The default compaction policy sends exactly the requests it always sent.

A scripted 30-turn session over real HTTP (`bench/long_session.py`'s minimal driver: 2k-token
tool results in a 50k window, so the tool-result budget, server-side context editing, two
autocompacts and their restoration all happen) is reduced to one digest of every request
body. The digest below was taken before compaction policies existed (issue 23, deliverable
2): a change to it is a change to what every default session sends, and needs a reason.
"""

from __future__ import annotations

from pathlib import Path

from compact_testkit import long_session_bench

DEFAULT_DIGEST = "c9c256e004c3ee472f520daeada3c63c8a4f20e2f67799342c2a4df16e8a367e"


async def test_the_default_policy_sends_the_same_requests_as_before(tmp_path: Path) -> None:
    report = await long_session_bench().run_mini(
        turns=30,
        result_tokens=2_000,
        server_window=50_000,
        client_window=50_000,
        session_dir=tmp_path,
        collapse=False,
    )
    assert report.terminal == "completed" and report.compactions == 2
    assert report.fact_missing == 0 and report.violations == 0
    assert report.request_digest == DEFAULT_DIGEST
