"""What an interrupt keeps (issue 25, items 4, 8, 10, 11): the call that ran, the text that
arrived, the tokens that streamed, and only true words for the model.

Real parts: the Agent, the official SDK against the local Messages API server streaming
slowly, a real stdio MCP server (tests/mcp/servers/lookup_server.py, `lookup` readOnlyHint,
with start/end marker files), the real Bash tool, real transcripts on disk.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from queryloop import Agent
from queryloop.cli.render_text import recent_exchanges
from queryloop.loop import StreamDelta, Terminal
from queryloop.loop.resume import MAY_HAVE_RUN
from queryloop.messages import normalize_messages_for_api, validate_api_request
from queryloop.messages.api_types import ApiTool
from queryloop.messages.blocks import TextBlock, ToolResultBlock, ToolUseBlock
from queryloop.messages.types import AssistantMessage, TombstoneMessage, UserMessage
from queryloop.providers.base import TextDelta
from queryloop.providers.retry import RetryPolicy
from queryloop.session import load_transcript
from queryloop.testing import MessagesServer, text, tool_use, turn

SERVERS = Path(__file__).parents[1] / "mcp" / "servers"
MODEL = "claude-sonnet-4-6"
LOOKUP = "mcp__lookup__lookup"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def _options(server: MessagesServer, tmp_path: Path, project: Path, **extra: Any) -> dict[str, Any]:
    markers = tmp_path / "markers"
    markers.mkdir(exist_ok=True)
    config = tmp_path / "lookup.mcp.json"
    entry = {
        "command": sys.executable,
        "args": [str(SERVERS / "lookup_server.py")],
        "env": {"LOOKUP_MARKERS": str(markers)},
    }
    config.write_text(json.dumps({"mcpServers": {"lookup": entry}}))
    options: dict[str, Any] = {
        "base_url": server.base_url,
        "retry": RetryPolicy(max_retries=1, base_delay=0.01),
        "cwd": project,
        "home": tmp_path / "home",
        "mcp_config": config,
        "permission_mode": "bypassPermissions",
    }
    options.update(extra)
    return options


def _await(ready: Any, what: str) -> None:
    deadline = time.monotonic() + 60
    while not ready():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


def _results(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        block["tool_use_id"]: block
        for message in body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    }


def _tool_use_ids(body: dict[str, Any]) -> list[str]:
    return [
        block["id"]
        for message in body["messages"]
        if message["role"] == "assistant" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    ]


def _text(result: dict[str, Any]) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def _assistant_texts(body: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for message in body["messages"]:
        if message["role"] != "assistant":
            continue
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.extend(b["text"] for b in content if b.get("type") == "text")
    return out


def _valid(messages: list[Any]) -> list[Any]:
    request = normalize_messages_for_api(messages, [], thinking=None)
    body = {"model": MODEL, "max_tokens": 100, "messages": request}
    return [v for v in validate_api_request(body) if v.is_error]


async def test_abort_mid_stream_keeps_the_tool_call_that_ran_and_its_result(
    tmp_path: Path, project: Path
) -> None:
    """Item 11: the abort lands after the tool_use block (the tool is running) but before
    message_stop. The call and its result stay; the next prompt sees the real value."""
    call = tool_use(LOOKUP, {"key": "k1", "delay": 2.0}, id="toolu_k1")
    trailing = text("And while that runs, some more words. " * 20)
    script = [turn(text("Looking."), call, trailing), turn(text("Got it."))]
    markers = tmp_path / "markers"
    with MessagesServer(script, event_delay=0.03) as server:
        agent = Agent(MODEL, **_options(server, tmp_path, project))
        first = asyncio.ensure_future(agent.run("look up k1"))
        await asyncio.to_thread(_await, lambda: any(markers.glob("k1.start.*")), "the tool")
        agent.abort()
        result = await first
        kept = [m for m in agent.messages if isinstance(m, AssistantMessage)]
        second = await agent.run("and now?")
        await agent.aclose()
        body = server.requests[-1]
        violations = [v for v in server.violations if v]
    assert result.terminal is Terminal.ABORTED_STREAMING
    assert any(isinstance(b, ToolUseBlock) and b.id == "toolu_k1" for m in kept for b in m.content)
    assert second.text == "Got it." and violations == []
    assert "toolu_k1" in _tool_use_ids(body)
    assert _text(_results(body)["toolu_k1"]) == "value-k1"  # re-run: lookup is read-only
    transcript = agent.session.transcript
    assert transcript is not None
    reloaded = load_transcript(transcript.path)
    ids = [b.id for m in reloaded.messages if isinstance(m, AssistantMessage) for b in m.content
           if isinstance(b, ToolUseBlock)]  # fmt: skip
    assert ids == ["toolu_k1"] and reloaded.repaired == ()


async def test_abort_mid_answer_keeps_the_partial_text_and_counts_its_tokens(
    tmp_path: Path, project: Path
) -> None:
    """Items 8 and 4: the text that arrived is kept (a valid request, shown on --continue),
    and the tokens that streamed are counted, as an estimate, in the usage and the cost."""
    answer = "The answer is long, and it keeps going for quite a while. " * 40
    script = [turn(text(answer)), turn(text("Carrying on."))]
    streamed = ""
    with MessagesServer(script, event_delay=0.01) as server:
        agent = Agent(MODEL, **_options(server, tmp_path, project))
        async for event in agent.stream("explain"):
            if isinstance(event, StreamDelta) and isinstance(event.event, TextDelta):
                streamed += event.event.text
                if len(streamed) > 400:
                    agent.abort()
        first = agent.last_result
        await agent.run("go on")
        await agent.aclose()
        body = server.requests[-1]
        violations = [v for v in server.violations if v]
    assert first is not None and first.terminal is Terminal.ABORTED_STREAMING
    replies = [m for m in first.messages if isinstance(m, AssistantMessage)]
    partial = "".join(b.text for b in replies[-1].content if isinstance(b, TextBlock))
    assert partial and answer.startswith(partial) and len(partial) >= 400
    assert partial in _assistant_texts(body) and violations == []
    # Counted: what streamed, at four characters a token (the spinner's estimate).
    assert first.usage.output_tokens >= len(partial) // 4
    assert first.cost_usd > 0
    transcript = agent.session.transcript
    assert transcript is not None
    usage = [
        json.loads(line)
        for line in transcript.path.read_text().splitlines()
        if '"record":"usage"' in line
    ]
    interrupted = [u for u in usage if u["kind"] == "interrupted"]
    assert len(interrupted) == 1 and interrupted[0]["estimated"] is True
    assert interrupted[0]["usage"]["output_tokens"] >= len(partial) // 4
    # The transcript keeps the partial answer, and it normalises into a valid request.
    reloaded = load_transcript(transcript.path)
    texts = [b.text for m in reloaded.messages if isinstance(m, AssistantMessage)
             for b in m.content if isinstance(b, TextBlock)]  # fmt: skip
    assert partial in texts
    # --continue shows it as the answer to its prompt, not "(no answer)".
    assert dict(recent_exchanges(reloaded.messages))["explain"] == partial.strip()
    upto = next(i for i, m in enumerate(reloaded.messages) if partial in str(m))
    assert _valid(reloaded.messages[: upto + 2]) == []
    assert reloaded.cost_usd == pytest.approx(agent.cost_usd)


async def test_ctrl_c_during_a_command_tells_the_model_only_what_happened(
    tmp_path: Path, project: Path
) -> None:
    """Item 10: a Bash call interrupted by the user has its result recorded (the user
    interrupted it). The next prompt must not replace it with "interrupted before its result
    was recorded; it may or may not have taken effect"."""
    call = tool_use("Bash", {"command": "touch started && sleep 30"}, id="toolu_bash")
    script = [turn(call), turn(text("Understood."))]
    with MessagesServer(script) as server:
        agent = Agent(MODEL, **_options(server, tmp_path, project))
        first = asyncio.ensure_future(agent.run("wait a bit"))
        await asyncio.to_thread(_await, (project / "started").exists, "the command")
        agent.abort()
        # The command may start while the response still streams (streaming execution).
        aborted = (Terminal.ABORTED_TOOLS, Terminal.ABORTED_STREAMING)
        assert (await first).terminal in aborted
        recorded = _result_blocks(agent.messages)["toolu_bash"]
        await agent.run("never mind")
        await agent.aclose()
        body = server.requests[-1]
    result = _results(body)["toolu_bash"]
    assert MAY_HAVE_RUN not in _text(result)
    assert _text(result) == recorded.content
    transcript = agent.session.transcript
    assert transcript is not None
    reloaded = load_transcript(transcript.path)
    assert _result_blocks(reloaded.messages)["toolu_bash"].content == recorded.content
    stones = [line for line in transcript.path.read_text().splitlines() if '"tombstone"' in line]
    assert stones == []


def _result_blocks(messages: list[Any]) -> dict[str, ToolResultBlock]:
    return {
        b.tool_use_id: b
        for m in messages
        if isinstance(m, UserMessage) and not isinstance(m.content, str)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    }


def test_no_tombstone_type_is_misnamed() -> None:
    """The transcript test above greps for the tombstone type by its serialized name."""
    from queryloop.messages.serialization import message_to_dict

    assert message_to_dict(TombstoneMessage(target_uuid="x", reason="r"))["type"] == "tombstone"


async def test_a_host_driving_the_loop_itself_keeps_the_call_that_ran(tmp_path: Path) -> None:
    """Item 11 without a session (whose drafts also hold the call): `query()`'s own working
    array, which its terminal hands to a host that drives the loop itself, keeps the
    tool_use whose tool ran when the abort lands before message_stop, so its result is not
    an orphan that normalisation drops."""
    from loop_fakes import SimpleBuilder
    from pydantic import BaseModel

    from queryloop.loop import QueryParams, TerminalEvent, query
    from queryloop.messages import user_message
    from queryloop.providers.anthropic import AnthropicProvider
    from queryloop.tools.base import BaseTool, ToolContext, ToolResult

    started = asyncio.Event()

    class Input(BaseModel):
        key: str

    class Slow(BaseTool[Input]):
        name = "Slow"
        description = "Looks a key up, slowly."
        input_model: type[BaseModel] = Input
        read_only = True
        concurrency_safe = True

        async def call(self, input: Input, ctx: ToolContext) -> Any:
            started.set()
            await asyncio.sleep(30)
            yield ToolResult(content="never")

    slow = Slow()
    schema: ApiTool = {
        "name": slow.name,
        "description": slow.description,
        "input_schema": slow.input_schema(),
    }
    trailing = text("And while that runs, some more words. " * 20)
    script = [turn(text("Looking."), tool_use("Slow", {"key": "k"}, id="toolu_s"), trailing)]
    ctx = ToolContext(cwd=tmp_path)
    with MessagesServer(script, event_delay=0.03) as server:
        async with AnthropicProvider(api_key="k", base_url=server.base_url) as provider:
            params = QueryParams(
                provider=provider,
                request_builder=SimpleBuilder([schema], model=MODEL),
                tool_context=ctx,
                tools=[slow],
                max_output_tokens=1000,
                max_output_tokens_ceiling=4000,
            )
            events = []
            async for event in query(params, [user_message("look k up")]):
                events.append(event)
                if started.is_set() and not ctx.abort.aborted:
                    ctx.abort.abort("user")
    terminal = events[-1]
    assert isinstance(terminal, TerminalEvent) and terminal.reason is Terminal.ABORTED_STREAMING
    request = normalize_messages_for_api(list(terminal.messages), [schema], thinking=None)
    uses = [b for m in request if m["role"] == "assistant" for b in m["content"]
            if isinstance(b, dict) and b.get("type") == "tool_use"]  # fmt: skip
    results = [b for m in request if m["role"] == "user" and isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_result"]  # fmt: skip
    assert [u["id"] for u in uses] == ["toolu_s"]
    assert [r["tool_use_id"] for r in results] == ["toolu_s"]
