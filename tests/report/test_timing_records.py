"""The transcript records what the report needs: request start / first token / end, tool
start / end, transitions and terminals, and old readers still load it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_session import RecordedSession

from queryloop.report import read_timeline
from queryloop.report.model import EventKind, RequestOutcome
from queryloop.session import load_transcript
from queryloop.session.timing import TimingEvent

# The recorded session is made once per worker: one worker runs all the report tests.
pytestmark = pytest.mark.xdist_group("report")


def timing_records(path: Path) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in lines if r.get("record") == "timing"]


def test_every_request_has_start_first_token_and_end_in_order(
    recorded_session: RecordedSession,
) -> None:
    records = timing_records(recorded_session.transcript)
    events = [r["event"] for r in records]
    assert events.count(TimingEvent.REQUEST_START) == 6  # 7 turns minus the compaction call
    timeline = read_timeline(recorded_session.transcript)
    requests = timeline.main.requests
    assert len(requests) == 6
    for r in requests:
        assert r.outcome is RequestOutcome.OK
        assert r.first_token is not None and r.end is not None
        assert r.start <= r.first_token <= r.end
        assert r.usage.output_tokens > 0
        assert r.window > r.autocompact_at > 0
    assert [r.stop_reason for r in requests[:3]] == ["tool_use", "tool_use", "max_tokens"]
    # The cache simulation of the local server: later requests read the prefix from cache.
    assert requests[-1].usage.cache_read_input_tokens > 0


def test_tool_calls_run_in_parallel_while_the_model_still_streams(
    recorded_session: RecordedSession,
) -> None:
    timeline = read_timeline(recorded_session.transcript)
    first_request = timeline.main.requests[0]
    lookups = [t for t in timeline.main.tools if t.name == "slow_lookup"]
    assert len(lookups) == 3
    assert all(t.end is not None and t.end - t.start >= 0.29 for t in lookups)
    # Started before the stream ended (streaming tool execution), and overlapping.
    assert first_request.end is not None
    assert all(t.start < first_request.end for t in lookups)
    starts, ends = [t.start for t in lookups], [t.end or 0.0 for t in lookups]
    assert max(starts) < min(ends)
    assert all(t.request == first_request.request for t in lookups)


def test_denials_and_errors_are_told_apart(recorded_session: RecordedSession) -> None:
    tools = {t.name: t for t in read_timeline(recorded_session.transcript).main.tools}
    assert tools["Write"].denied and tools["Write"].is_error
    assert tools["broken"].is_error and not tools["broken"].denied
    assert not tools["slow_lookup"].is_error


def test_transitions_terminals_recovery_and_compaction_are_on_the_axis(
    recorded_session: RecordedSession,
) -> None:
    lane = read_timeline(recorded_session.transcript).main
    labels = [(e.kind, e.label) for e in lane.events]
    assert labels.count((EventKind.TRANSITION, "next_turn")) == 2
    assert (EventKind.RECOVERY, "max_output_tokens_escalate") in labels
    assert [label for kind, label in labels if kind is EventKind.TERMINAL] == ["completed"] * 3
    [compaction] = lane.compactions
    assert compaction.kind == "manual" and compaction.pre_tokens > 0
    assert compaction.post_tokens is not None
    times = [e.t for e in lane.events]
    assert times == sorted(times)


def test_the_loader_accepts_timing_records_silently(recorded_session: RecordedSession) -> None:
    loaded = load_transcript(recorded_session.transcript, repair=False)
    assert not any("unknown kind" in p for p in loaded.problems), loaded.problems
    assert loaded.responses == 6


def test_an_old_transcript_without_timing_records_still_reports(
    recorded_session: RecordedSession, tmp_path: Path
) -> None:
    old = tmp_path / "old-session.jsonl"
    lines = recorded_session.transcript.read_text().splitlines()
    old.write_text("\n".join(line for line in lines if '"record":"timing"' not in line) + "\n")
    lane = read_timeline(old).main
    assert not lane.has_timing and lane.tools == ()
    assert len(lane.requests) == 6  # from the usage records
    assert sum(r.cost_usd for r in lane.requests) > 0


def test_unknown_record_kinds_and_garbage_are_tolerated(
    recorded_session: RecordedSession, tmp_path: Path
) -> None:
    copy = tmp_path / "future.jsonl"
    text = recorded_session.transcript.read_text()
    copy.write_text(
        text + '{"record":"hologram","t":1}\n{"record":"timing","event":"warp"}\n{"trunc'
    )
    timeline = read_timeline(copy)
    assert len(timeline.main.requests) == 6
    assert any("unreadable" in p for p in timeline.problems)
    loaded = load_transcript(copy, repair=False)
    assert any("'hologram'" in p for p in loaded.problems)
