"""The session owns the one message array, its usage, cost and transcript (issue 13, §1).

Over real HTTP against `queryloop.testing`: after `Agent.compact()` and the REPL's `/compact`
the next request is built from the compacted array (summary + kept tail, no old rounds),
the summary request is counted once in cost and written once to the transcript, and every
request the server saw is one usage record.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from queryloop import Agent
from queryloop.abort import AbortSignal
from queryloop.cli.args import parse_args
from queryloop.cli.repl import Repl
from queryloop.loop.events import CompactionEvent, CompactTrigger, MessageEvent, TerminalEvent
from queryloop.loop.reasons import Terminal
from queryloop.messages import AssistantMessage, Message, assistant_message, user_message
from queryloop.messages.constructors import compact_boundary, tombstone
from queryloop.messages.usage import Usage
from queryloop.providers.base import MessageComplete, MessageStart, ModelRequest, ModelResponse
from queryloop.session import (
    MeteredProvider,
    RequestKind,
    Session,
    Transcript,
    list_sessions,
    load_transcript,
)
from queryloop.testing import MessagesServer, text, tool_use, turn

EARLY = "EARLY-ROUND-MARKER"
SUMMARY = "SUMMARY-OF-EARLIER-WORK"
LAST = "LAST-ANSWER-KEPT-VERBATIM"


@pytest.fixture(autouse=True)
def _env(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QUERYLOOP_MODEL", raising=False)


def _script() -> list[Any]:
    filler = "lorem ipsum " * 300
    return [
        turn(text("Running it."), tool_use("Bash", {"command": f"echo {EARLY} {filler}"})),
        turn(text(f"It printed the marker. {filler}")),
        turn(text("Again."), tool_use("Bash", {"command": f"echo second {filler}"})),
        turn(text(f"Second done. {filler}")),
        turn(text(LAST)),
        turn(text(f"<summary>{SUMMARY}</summary>")),
        turn(text("Continuing from the summary.")),
    ]


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _assert_built_from_compacted_array(requests: list[Any]) -> None:
    before, summary_request, after = requests[-3], requests[-2], requests[-1]
    sent = json.dumps(after["messages"])
    assert SUMMARY in sent  # the summary is in the next request...
    assert LAST in sent  # ...with the kept tail verbatim...
    assert EARLY not in sent  # ...and no old round (issue 13: all 77 old messages came back)
    assert len(after["messages"]) < len(before["messages"])
    assert EARLY in json.dumps(summary_request["messages"])  # the summary read the history


async def test_agent_compact_replaces_the_array_and_bills_the_summary(tmp_path: Path) -> None:
    with MessagesServer(_script()) as server:
        agent = Agent(
            "claude-sonnet-5-5",
            base_url=server.base_url,
            cwd=tmp_path,
            permission_mode="bypassPermissions",
        )
        first = await agent.run("run the marker command")
        second = await agent.run("run another")
        third = await agent.run("say the last answer")
        cost_before = agent.cost_usd
        event = await agent.compact("keep the file names")
        assert isinstance(event, CompactionEvent) and event.trigger is CompactTrigger.MANUAL
        assert agent.session.messages == tuple(agent.messages) == event.messages
        assert agent.context_usage()["messages"] > 0  # today: 0 after /compact
        cost_after_compact = agent.cost_usd
        nxt = await agent.run("go on")
        path = agent.session.transcript.path  # type: ignore[union-attr]
        await agent.aclose()
        requests = server.requests
        assert all(v == [] for v in server.violations)
    _assert_built_from_compacted_array(requests)
    usage = [r for r in _records(path) if r["record"] == "usage"]
    assert len(usage) == len(requests)  # every billed request written once
    assert [r["kind"] for r in usage].count("compact") == 1
    compact_cost = next(r["cost_usd"] for r in usage if r["kind"] == "compact")
    assert compact_cost > 0
    assert cost_after_compact == pytest.approx(cost_before + compact_cost)
    runs = [first, second, third, nxt]
    assert agent.cost_usd == pytest.approx(sum(r["cost_usd"] for r in usage))
    assert agent.cost_usd == pytest.approx(sum(r.cost_usd for r in runs) + compact_cost)
    assert agent.session.requests == len(requests)
    # Turns: one definition everywhere (docs/loop.md): result, session, listing, reload.
    assert [r.turns for r in runs] == [2, 2, 1, 1]
    assert agent.turns == 6
    (listed,) = list_sessions(tmp_path)
    assert listed.turns == 6 and listed.prompts == 4
    assert listed.cost_usd == pytest.approx(agent.cost_usd)
    loaded = load_transcript(path)
    assert loaded.turns == 6 and loaded.prompts == 4
    # Resuming continues from the compacted array.
    assert SUMMARY in json.dumps([m.__class__.__name__ + str(m) for m in loaded.messages])


async def test_repl_compact_then_next_request_and_cost(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    with MessagesServer(_script()) as server:
        import os

        os.environ["ANTHROPIC_BASE_URL"] = server.base_url
        try:
            inputs: list[str | Callable[[], str]] = [
                "run the marker command",
                "run another",
                "say the last answer",
                "/compact keep the file names",
                "/context",
                "go on",
                "/cost",
            ]

            async def read_line(prompt: str) -> str:
                if not inputs:
                    raise EOFError
                item = inputs.pop(0)
                return item() if callable(item) else item

            buf = io.StringIO()
            options = parse_args(["--cwd", str(proj), "--permission-mode", "bypassPermissions"])
            assert options is not None
            repl = Repl(options, console=Console(file=buf, width=120), read_line=read_line)
            assert await repl.run() == 0
            requests = server.requests
        finally:
            del os.environ["ANTHROPIC_BASE_URL"]
    out = buf.getvalue()
    _assert_built_from_compacted_array(requests)
    assert "Compacted" in out
    shown = re.search(r"messages\s+([\d,]+) tokens", out)
    assert shown is not None and int(shown.group(1).replace(",", "")) > 0
    (transcript,) = (tmp_path / "home" / "projects").glob("*/*.jsonl")
    usage = [r for r in _records(transcript) if r["record"] == "usage"]
    assert len(usage) == len(requests) and [r["kind"] for r in usage].count("compact") == 1
    total = re.search(r"Total cost:\s+\$([\d.]+)", out)
    assert total is not None
    assert float(total.group(1)) == pytest.approx(sum(r["cost_usd"] for r in usage), abs=1e-4)


def test_session_append_tombstone_replace_and_persistence(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "s.jsonl", "s", fsync=False)
    session = Session("s", transcript=transcript)
    prompt = user_message("hi")
    voided = assistant_message("cut off")
    session.apply(MessageEvent(prompt))
    session.apply(MessageEvent(voided))
    session.apply(MessageEvent(tombstone(voided.uuid, "retry")))
    assert session.messages == (prompt,)
    answer = assistant_message("answer")
    session.append(answer)
    boundary = compact_boundary("manual", 100)
    summary = user_message("summary", is_compact_summary=True)
    session.apply(CompactionEvent((boundary, summary, answer), CompactTrigger.MANUAL))
    kept: tuple[Message, ...] = session.messages
    assert kept[:2] == (boundary, summary)
    copy = kept[2]
    assert isinstance(copy, AssistantMessage)
    assert copy.uuid != answer.uuid and copy.content == answer.content  # a fresh copy
    session.apply(TerminalEvent(Terminal.COMPLETED, turn=3))
    assert session.turns == 3 and session.prompts == 1
    transcript.close()
    kinds = [r.get("record") for r in _records(tmp_path / "s.jsonl")]
    # prompt, voided, tombstone, answer, boundary, summary, answer's copy, result
    assert kinds == ["message"] * 7 + ["result"]
    reloaded = load_transcript(tmp_path / "s.jsonl").messages
    assert [m.uuid for m in reloaded] == [m.uuid for m in kept]


class _Provider:
    name = "fake"

    def __init__(self, complete: bool) -> None:
        self.complete = complete

    async def stream(self, request: ModelRequest, abort: AbortSignal | None = None) -> Any:
        yield MessageStart("m1", "claude-sonnet-5-5", Usage(input_tokens=1000))
        if self.complete:
            response = ModelResponse(
                id="m1",
                model="claude-sonnet-5-5",
                content=(),
                stop_reason="end_turn",
                usage=Usage(input_tokens=1000, output_tokens=50),
            )
            yield MessageComplete(response)


@pytest.mark.parametrize("complete", [True, False])
async def test_metered_provider_records_each_billed_request_once(complete: bool) -> None:
    session = Session("s")
    provider = MeteredProvider(_Provider(complete), session, RequestKind.COMPACT)
    request = ModelRequest(model="claude-sonnet-5-5", messages=[], max_tokens=10)
    async for _ in provider.stream(request):
        pass
    (record,) = session.records
    assert record.kind is (RequestKind.COMPACT if complete else RequestKind.INTERRUPTED)
    assert record.usage.input_tokens == 1000 and record.cost_usd > 0
    assert session.cost_usd == record.cost_usd and session.requests == 1
