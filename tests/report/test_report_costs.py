"""What caching saved and what each compaction cost and saved: /cost and the session report
(`queryloop.report.costs`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from queryloop import Agent
from queryloop.cli.render_text import cost_lines
from queryloop.messages import SystemMessage, SystemSubtype, Usage, message_to_dict
from queryloop.providers.models import cost_usd
from queryloop.report import read_timeline
from queryloop.report.page import summary
from queryloop.testing import MessagesServer, text, tool_use, turn

MODEL = "claude-sonnet-4-6"  # $3 input, $3.75 5-minute write, $0.30 read, $15 output


def usage(cw: int, cr: int, out: int = 50, inp: int = 0) -> Usage:
    return Usage(
        input_tokens=inp,
        cache_creation_input_tokens=cw,
        cache_read_input_tokens=cr,
        output_tokens=out,
    )


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat()


def write_transcript(path: Path, steps: list[tuple[str, float, Usage]]) -> None:
    """main requests (timing + usage records), compaction summaries and boundaries."""
    records: list[dict[str, Any]] = [{"record": "meta", "session_id": "s", "model": MODEL}]
    for kind, t, u in steps:
        paid = cost_usd(u, MODEL)
        record: dict[str, Any] = {
            "record": "usage",
            "session_id": "s",
            "timestamp": iso(t),
            "model": MODEL,
        }
        record |= {"usage": u.to_dict(), "cost_usd": paid, "kind": kind}
        if kind == "main":
            rid = f"r{t}"
            records.append({"record": "timing", "event": "request_start", "request": rid, "t": t})
            records.append(record)
            end = {"usage": u.to_dict(), "cost_usd": paid, "model": MODEL}
            records.append(
                {"record": "timing", "event": "request_end", "request": rid, "t": t + 1, **end}
            )
        elif kind == "compact":
            records.append(record)
        else:  # the boundary; `u.input_tokens` carries its pre_tokens
            boundary = SystemMessage(
                subtype=SystemSubtype.COMPACT_BOUNDARY,
                content="Conversation compacted",
                metadata={"trigger": "auto", "pre_tokens": u.input_tokens},
                timestamp=iso(t),
            )
            records.append({"record": "message", "message": message_to_dict(boundary)})
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_the_figures_follow_their_definitions(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_transcript(
        path,
        [
            ("main", 100, usage(cw=10_000, cr=0, inp=100)),
            ("main", 110, usage(cw=500, cr=10_000)),
            ("main", 120, usage(cw=500, cr=10_500)),
            ("compact", 125, usage(cw=300, cr=11_000, out=400)),
            ("boundary", 130, Usage(input_tokens=11_500)),
            ("main", 140, usage(cw=2_000, cr=1_000)),  # a 3,000-token prompt: 8,500 freed
            ("main", 150, usage(cw=100, cr=3_000)),
            ("main", 160, usage(cw=100, cr=3_100)),
        ],
    )
    costs = read_timeline(path).costs
    # Billed: 7 requests. Written 13,500 at $3.75, read 38,600 at $0.30, 100 uncached at $3,
    # 700 output at $15 (per million).
    assert costs.requests == 7
    assert costs.cost_usd == pytest.approx(
        (13_500 * 3.75 + 38_600 * 0.30 + 100 * 3 + 700 * 15) / 1e6
    )
    # Uncached: all 52,200 prompt tokens at $3.
    assert costs.uncached_cost_usd == pytest.approx((52_200 * 3 + 700 * 15) / 1e6)
    assert costs.cache_saved_usd == pytest.approx(
        (52_200 * 3 - 13_500 * 3.75 - 38_600 * 0.30 - 100 * 3) / 1e6
    )
    [compaction] = costs.compactions
    assert compaction.cost_usd == pytest.approx((300 * 3.75 + 11_000 * 0.30 + 400 * 15) / 1e6)
    assert compaction.freed_tokens == 8_500
    assert compaction.requests_after == 3
    assert compaction.saved_usd == pytest.approx(8_500 * 3 * 0.30 / 1e6)
    assert compaction.rewrite_usd == pytest.approx(2_000 * (3.75 - 0.30) / 1e6)
    assert compaction.net_usd == pytest.approx(
        compaction.saved_usd - compaction.cost_usd - compaction.rewrite_usd
    )


def test_entries_written_and_never_read_make_caching_a_loss(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_transcript(path, [("main", 100, usage(cw=10_000, cr=0))])
    costs = read_timeline(path).costs
    assert costs.cache_saved_usd == pytest.approx(-10_000 * 0.75 / 1e6)
    assert costs.compactions == ()


def model(body: dict[str, Any]) -> Any:
    last = json.dumps(body["messages"][-1])
    if "detailed summary" in last:
        return turn(text("<summary>Read notes.txt three times.</summary>"))
    if "tool_result" in last:
        return turn(text("Read it."))
    return turn(tool_use("Read", {"file_path": "notes.txt"}))


async def test_cost_and_the_report_show_the_savings_of_a_real_session(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("a line of notes\n" * 400)
    with MessagesServer(model) as server:
        agent = Agent(MODEL, base_url=server.base_url, cwd=tmp_path)
        async with agent:
            for prompt in ("read the notes", "again", "and again"):
                await agent.run(prompt)
            assert await agent.compact() is not None
            for prompt in ("after the summary", "once more"):
                await agent.run(prompt)
            costs = agent.cost_breakdown()
            lines = cost_lines(agent.cost_usd, agent.turns, agent.usage, costs)
            path = agent.session.transcript.path  # type: ignore[union-attr]
    assert costs.cost_usd == pytest.approx(agent.cost_usd)
    assert costs.requests == agent.session.requests == 11  # 10 turns and the summary
    assert costs.cache_saved_usd > 0
    [compaction] = costs.compactions
    summary_cost = [r.cost_usd for r in agent.session.records if r.kind == "compact"]
    assert compaction.cost_usd == pytest.approx(summary_cost[0])
    assert compaction.freed_tokens and compaction.freed_tokens > 0
    assert compaction.requests_after == 4
    text_of_cost = "\n".join(lines)
    assert "Caching saved:  $" in text_of_cost and "would have cost uncached" in text_of_cost
    assert "1. manual: cost $" in text_of_cost and "× 4 later requests" in text_of_cost
    page = summary(read_timeline(path))
    assert page["caching saved"].startswith(f"${costs.cache_saved_usd:.4f}")
