"""Tool-use summaries end to end: the Agent on the local server, a Haiku summarizer beside
the main model, ordering asserted at the server (not with timings)."""

from __future__ import annotations

import json
import threading
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from agent_support import agent_on as shared_agent_on
from queryloop import Agent
from queryloop.loop import SideUsage, Terminal
from queryloop.loop.summaries import clean_summary, describe_batch
from queryloop.messages import ToolUseSummaryMessage
from queryloop.messages.blocks import ToolUseBlock
from queryloop.messages.constructors import tool_result_message
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn
from queryloop.testing.script import ScriptExhaustedError

SUMMARY_MODEL = "claude-haiku-5-5"


pytestmark = pytest.mark.usefixtures("home")


class TwoModels:
    """Main turns in order; summary requests answered by `summaries` (blocking until
    `release` is set, to play a slow summarizer)."""

    def __init__(self, main: list[Turn], summaries: list[str]) -> None:
        self.main = main
        self.summaries = summaries
        self.main_calls = 0
        self.summary_calls = 0
        self.main_arrived: list[threading.Event] = [threading.Event() for _ in main]
        self.released_by_main: list[bool] = []
        self.lock = threading.Lock()
        self.wait_for_main: int | None = None

    def __call__(self, body: dict[str, Any]) -> Turn:
        with self.lock:
            if body["model"] == SUMMARY_MODEL:
                index = self.summary_calls
                self.summary_calls += 1
            else:
                index = self.main_calls
                self.main_calls += 1
        if body["model"] != SUMMARY_MODEL:
            self.main_arrived[index].set()
            return self.main[index]
        if self.wait_for_main is not None and index == 0:
            # A slow summarizer: it answers only once the NEXT main request has arrived.
            # Were the loop waiting for it, that request would never come (until timeout).
            self.released_by_main.append(self.main_arrived[self.wait_for_main].wait(20))
        return turn(text(self.summaries[index]))


agent_on = partial(shared_agent_on, permission_mode="bypassPermissions")


def main_script() -> list[Turn]:
    return [
        turn(text("Looking."), tool_use("Bash", {"command": "echo first-batch"})),
        turn(tool_use("Bash", {"command": "echo second-batch"})),
        turn(text("All done.")),
    ]


async def test_slow_summarizer_does_not_delay_the_next_main_request(tmp_path: Path) -> None:
    model = TwoModels(main_script(), ["Echoed the first batch", "Echoed the second batch"])
    model.wait_for_main = 1  # summary 1 waits for main request #2
    with MessagesServer(model) as server:
        agent = agent_on(server, tmp_path, tool_use_summaries=True)
        events = [e async for e in agent.stream("go")]
        await agent.aclose()
        recorded = server.recorded
    assert model.released_by_main == [True]
    main = [r for r in recorded if r.body["model"] != SUMMARY_MODEL]
    side = [r for r in recorded if r.body["model"] == SUMMARY_MODEL]
    assert len(main) == 3 and len(side) == 2
    # The first summary was asked for before main request #2 arrived, and answered after.
    assert side[0].received_at <= main[1].received_at
    terminal = events[-1]
    assert terminal.reason is Terminal.COMPLETED  # type: ignore[union-attr]
    summaries = [m for m in agent.messages if isinstance(m, ToolUseSummaryMessage)]
    assert [s.summary for s in summaries] == ["Echoed the first batch", "Echoed the second batch"]
    # Each summary names the tool calls of its batch.
    calls = [b for m in agent.messages if m.type == "assistant" for b in m.content
             if isinstance(b, ToolUseBlock)]  # fmt: skip
    assert [s.tool_use_ids for s in summaries] == [(calls[0].id,), (calls[1].id,)]
    # Never sent to the API.
    for request in main:
        assert "Echoed the" not in json.dumps(request.body)
    assert all(not v for v in server.violations)


async def test_summary_cost_is_counted_but_not_as_a_turn(tmp_path: Path) -> None:
    model = TwoModels(main_script(), ["Echoed one", "Echoed two"])
    with MessagesServer(model) as server:
        agent = agent_on(server, tmp_path, tool_use_summaries=True)
        side_usage = [e async for e in agent.stream("go") if isinstance(e, SideUsage)]
        await agent.aclose()
    assert len(side_usage) == 2
    assert {e.model for e in side_usage} == {SUMMARY_MODEL}
    assert agent.turns == 3
    records = [json.loads(line) for line in _transcript(tmp_path).read_text().splitlines()]
    usage = [r for r in records if r["record"] == "usage"]
    assert [r.get("purpose", "") for r in usage].count("tool_use_summary") == 2
    assert sum(r["cost_usd"] for r in usage) == pytest.approx(agent.cost_usd)
    summary_cost = sum(r["cost_usd"] for r in usage if r.get("purpose"))
    assert summary_cost > 0
    # The summary tokens are in the session totals.
    side_tokens = sum(e.usage.output_tokens for e in side_usage)
    main_tokens = sum(r["usage"]["output_tokens"] for r in usage if not r.get("purpose"))
    assert agent.usage.output_tokens == main_tokens + side_tokens
    # A resumed session counts three turns, and the summaries' cost.
    from queryloop.session import load_transcript

    loaded = load_transcript(_transcript(tmp_path))
    assert loaded.responses == 3
    assert loaded.cost_usd == pytest.approx(agent.cost_usd)
    assert sum(isinstance(m, ToolUseSummaryMessage) for m in loaded.messages) == 2


async def test_summaries_are_off_by_default_in_the_sdk(tmp_path: Path) -> None:
    model = TwoModels(main_script(), [])
    with MessagesServer(model) as server:
        agent = agent_on(server, tmp_path)
        result = await agent.run("go")
        await agent.aclose()
    assert result.terminal is Terminal.COMPLETED
    assert model.summary_calls == 0
    assert not any(isinstance(m, ToolUseSummaryMessage) for m in result.messages)


async def test_a_failing_summarizer_is_skipped(tmp_path: Path) -> None:
    def script(body: dict[str, Any]) -> Turn:
        if body["model"] == SUMMARY_MODEL:
            raise ScriptExhaustedError("summarizer down")  # the server answers 400
        index = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return main_script()[index]

    with MessagesServer(script) as server:
        agent = agent_on(server, tmp_path, tool_use_summaries=True)
        result = await agent.run("go")
        await agent.aclose()
    assert result.terminal is Terminal.COMPLETED
    assert result.text == "All done."
    assert not any(isinstance(m, ToolUseSummaryMessage) for m in result.messages)


def test_describe_batch_and_clean_summary() -> None:
    call = ToolUseBlock(id="toolu_1", name="Bash", input={"command": "ls " + "x" * 1000})
    result = tool_result_message("toolu_1", "a.py\nb.py")
    described = describe_batch([call], [result])
    assert "Tool: Bash" in described and "Result: a.py b.py" in described
    assert len(described) < 1000
    assert clean_summary('\n"Listed the files."\nmore') == "Listed the files"


def _transcript(tmp_path: Path) -> Path:
    files = list((tmp_path / "home" / "projects").rglob("*.jsonl"))
    assert len(files) == 1
    return files[0]


def test_stream_json_emits_the_summary(tmp_path: Path) -> None:
    import subprocess
    import sys

    model = TwoModels(main_script(), ["Echoed one", "Echoed two"])
    with MessagesServer(model) as server:
        env = {
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": "test-key",
            "QUERYLOOP_HOME": str(tmp_path / "home"),
            "PATH": "/usr/bin:/bin",
        }
        done = subprocess.run(
            [sys.executable, "-m", "queryloop.cli.main", "-p", "go", "--output-format",
             "stream-json", "--permission-mode", "bypassPermissions", "--tool-use-summaries"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=90,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    summaries = [line for line in lines if line["type"] == "tool_use_summary"]
    assert [s["message"]["summary"] for s in summaries] == ["Echoed one", "Echoed two"]
    result = lines[-1]
    assert result["type"] == "result" and result["num_turns"] == 3


async def test_no_default_summaries_on_an_openai_compatible_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A local server often serves one request at a time: a summary would queue in front of
    # the next main request, so there is none unless a summary model is named.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with MessagesServer(main_script()) as server:
        agent = Agent("ollama:qwen2.5", base_url=server.base_url + "/v1", cwd=tmp_path,
                      permission_mode="bypassPermissions", tool_use_summaries=True)  # fmt: skip
        result = await agent.run("go")
        await agent.aclose()
        models = [r.body["model"] for r in server.recorded]
    assert result.terminal is Terminal.COMPLETED
    assert models == ["qwen2.5"] * 3
