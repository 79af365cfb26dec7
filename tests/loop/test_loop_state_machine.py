"""The query loop's transitions and terminals, asserted on recorded reasons."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from loop_fakes import FakeProvider, Reply, SimpleBuilder, text, tools
from pydantic import BaseModel

from queryloop.hooks.types import StopHookInput, StopHookResult
from queryloop.loop import (
    Continue,
    LoopEvent,
    MessageEvent,
    QueryParams,
    Terminal,
    TerminalEvent,
    TransitionEvent,
    query,
)
from queryloop.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    UserMessage,
    user_message,
    validate_api_request,
)
from queryloop.messages.api_types import ApiTool
from queryloop.messages.constructors import meta_user_message
from queryloop.providers.errors import (
    InvalidRequestError,
    OverloadedError,
    PromptTooLongError,
    StreamInterruptedError,
)
from queryloop.tools.base import (
    BaseTool,
    PostToolUseOutcome,
    PreToolUseOutcome,
    ToolContext,
    ToolResult,
)


class EchoInput(BaseModel):
    text: str
    seconds: float = 0.0


class Echo(BaseTool[EchoInput]):
    name = "Echo"
    description = "Echo text back, optionally after sleeping."
    input_model: type[BaseModel] = EchoInput
    read_only = True
    concurrency_safe = True

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def call(self, input: EchoInput, ctx: ToolContext) -> AsyncIterator[Any]:
        self.calls.append(input.text)
        if input.seconds:
            await asyncio.sleep(input.seconds)
        yield ToolResult(content=f"echo: {input.text}")


@dataclass
class Run:
    events: list[LoopEvent]
    provider: FakeProvider

    @property
    def transitions(self) -> list[Continue]:
        return [e.reason for e in self.events if isinstance(e, TransitionEvent)]

    @property
    def terminal(self) -> TerminalEvent:
        last = self.events[-1]
        assert isinstance(last, TerminalEvent)
        return last

    def assert_requests_valid(self) -> None:
        for request in self.provider.requests:
            assert validate_api_request(request.to_body()) == []

    def final_request_after(self) -> list[dict[str, Any]]:
        body = SimpleBuilder(self.schemas).build(self.terminal.messages, max_tokens=100).to_body()
        messages: list[dict[str, Any]] = body["messages"]
        return messages

    schemas: Sequence[ApiTool] = ()


def make_params(provider: FakeProvider, tmp_path: Path, **kw: Any) -> QueryParams:
    tool_list = kw.pop("tools", [Echo()])
    schemas: list[ApiTool] = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema()}
        for t in tool_list
    ]
    return QueryParams(
        provider=provider,
        request_builder=SimpleBuilder(schemas, model="main-model"),
        tool_context=kw.pop("tool_context", None) or ToolContext(cwd=tmp_path),
        tools=tool_list,
        max_output_tokens=kw.pop("max_output_tokens", 1000),
        max_output_tokens_ceiling=kw.pop("max_output_tokens_ceiling", 4000),
        **kw,
    )


async def run_loop(replies: list[Any], tmp_path: Path, prompt: str = "hi", **kw: Any) -> Run:
    provider = FakeProvider(list(replies))
    params = make_params(provider, tmp_path, **kw)
    events = [e async for e in query(params, [user_message(prompt)])]
    run = Run(events, provider)
    run.schemas = params.request_builder.tool_schemas  # type: ignore[attr-defined]
    run.assert_requests_valid()
    assert (
        validate_api_request(
            {
                "model": "m",
                "max_tokens": 10,
                "messages": run.final_request_after(),
                "tools": run.schemas,
            }
        )
        == []
    )
    return run


async def test_text_reply_completes(tmp_path: Path) -> None:
    run = await run_loop([text("hello")], tmp_path)
    assert run.transitions == []
    assert run.terminal.reason is Terminal.COMPLETED
    assistant = [m for m in run.terminal.messages if isinstance(m, AssistantMessage)]
    assert assistant[-1].stop_reason == "end_turn"


async def test_tool_use_runs_tool_and_goes_to_next_turn(tmp_path: Path) -> None:
    echo = Echo()
    run = await run_loop(
        [tools(("t1", "Echo", {"text": "a"}), ("t2", "Echo", {"text": "b"})), text("done")],
        tmp_path,
        tools=[echo],
    )
    assert run.transitions == [Continue.NEXT_TURN]
    assert run.terminal.reason is Terminal.COMPLETED
    assert sorted(echo.calls) == ["a", "b"]
    second = run.provider.requests[1].messages
    results = second[-1]["content"]
    assert [b["tool_use_id"] for b in results] == ["t1", "t2"]
    assert results[0]["content"] == "echo: a"


async def test_max_tokens_escalates_then_recovers_three_times_then_stops(tmp_path: Path) -> None:
    cut = Reply(blocks=(TextBlock(text="partial"),), stop_reason="max_tokens")
    run = await run_loop([cut, cut, cut, cut, cut], tmp_path)
    assert run.transitions == [
        Continue.MAX_OUTPUT_TOKENS_ESCALATE,
        Continue.MAX_OUTPUT_TOKENS_RECOVERY,
        Continue.MAX_OUTPUT_TOKENS_RECOVERY,
        Continue.MAX_OUTPUT_TOKENS_RECOVERY,
    ]
    assert run.terminal.reason is Terminal.COMPLETED
    first, second = run.provider.requests[0], run.provider.requests[1]
    assert (first.max_tokens, second.max_tokens) == (1000, 4000)
    # The escalation retried the same request: no message was added.
    assert first.messages == second.messages
    nudges = [m for m in run.terminal.messages if isinstance(m, UserMessage) and m.is_meta]
    assert len(nudges) == 3 and "no apology" in str(nudges[0].content)


async def test_recovery_then_success_completes(tmp_path: Path) -> None:
    cut = Reply(blocks=(TextBlock(text="part one"),), stop_reason="max_tokens")
    run = await run_loop([cut, cut, text("part two")], tmp_path)
    assert run.transitions == [
        Continue.MAX_OUTPUT_TOKENS_ESCALATE,
        Continue.MAX_OUTPUT_TOKENS_RECOVERY,
    ]
    assert run.terminal.reason is Terminal.COMPLETED


@dataclass
class FakeCompaction:
    messages: Sequence[Message]
    pre_tokens: int = 0
    post_tokens: int = 0


class FakeCompactor:
    """Records what the loop asks; drains once, compacts to the last user message."""

    def __init__(self, *, drainable: bool = True, compactable: bool = True) -> None:
        self.drainable = drainable
        self.compactable = compactable
        self.calls: list[str] = []

    async def preprocess(self, messages: Sequence[Message], tracking: Any, **_: Any) -> Any:
        self.calls.append("preprocess")

        @dataclass
        class Result:
            messages_for_query: Sequence[Message]
            new_messages: Sequence[Message] = ()
            tracking: Any = None
            context_management: Any = None
            compacted: bool = False

        return Result(messages_for_query=list(messages), tracking=tracking)

    def is_at_blocking_limit(self, messages: Sequence[Message]) -> bool:
        return False

    async def drain_collapses(self) -> bool:
        self.calls.append("drain")
        drained, self.drainable = self.drainable, False
        return drained

    async def reactive(self, messages: Sequence[Message], error: Any) -> FakeCompaction | None:
        self.calls.append("reactive")
        if not self.compactable:
            return None
        return FakeCompaction([meta_user_message("summary of earlier work"), *messages[-1:]])


async def test_prompt_too_long_drains_then_compacts_then_succeeds(tmp_path: Path) -> None:
    ptl = Reply(error=PromptTooLongError("prompt is too long: 210000 tokens > 200000 maximum"))
    compactor = FakeCompactor()
    run = await run_loop([ptl, ptl, text("ok")], tmp_path, compactor=compactor)
    assert run.transitions == [Continue.COLLAPSE_DRAIN_RETRY, Continue.REACTIVE_COMPACT_RETRY]
    assert run.terminal.reason is Terminal.COMPLETED
    assert "drain" in compactor.calls and "reactive" in compactor.calls


async def test_prompt_too_long_without_recovery_is_terminal(tmp_path: Path) -> None:
    ptl = Reply(error=PromptTooLongError("prompt is too long"))
    compactor = FakeCompactor(drainable=False, compactable=False)
    run = await run_loop([ptl], tmp_path, compactor=compactor)
    assert run.transitions == []
    assert run.terminal.reason is Terminal.PROMPT_TOO_LONG
    assert isinstance(run.terminal.messages[-1], SystemMessage)


async def test_reactive_compact_is_attempted_only_once(tmp_path: Path) -> None:
    ptl = Reply(error=PromptTooLongError("prompt is too long"))
    run = await run_loop([ptl, ptl], tmp_path, compactor=FakeCompactor(drainable=False))
    assert run.transitions == [Continue.REACTIVE_COMPACT_RETRY]
    assert run.terminal.reason is Terminal.PROMPT_TOO_LONG


async def test_overload_switches_to_fallback_model(tmp_path: Path) -> None:
    overloaded = Reply(error=OverloadedError("Overloaded", status=529))
    run = await run_loop([overloaded, text("from fallback")], tmp_path, fallback_model="small")
    assert [r.model for r in run.provider.requests] == ["main-model", "small"]
    assert run.terminal.reason is Terminal.COMPLETED
    notices = [e.message for e in run.events if isinstance(e, MessageEvent)]
    assert any(isinstance(m, SystemMessage) and m.subtype == "model_fallback" for m in notices)


async def test_overload_without_fallback_is_model_error(tmp_path: Path) -> None:
    run = await run_loop([Reply(error=OverloadedError("Overloaded", status=529))], tmp_path)
    assert run.terminal.reason is Terminal.MODEL_ERROR


async def test_invalid_request_is_model_error_with_message(tmp_path: Path) -> None:
    run = await run_loop([Reply(error=InvalidRequestError("bad thing", status=400))], tmp_path)
    assert run.terminal.reason is Terminal.MODEL_ERROR
    assert "bad thing" in run.terminal.detail


async def test_stream_cut_without_tools_is_retried_and_tombstoned(tmp_path: Path) -> None:
    cut = Reply(
        blocks=(TextBlock(text="a"), TextBlock(text="b")),
        cut_after=1,
        error=StreamInterruptedError("connection dropped"),
    )
    run = await run_loop([cut, text("whole")], tmp_path)
    assert run.terminal.reason is Terminal.COMPLETED
    texts = [
        b.text
        for m in run.terminal.messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, TextBlock)
    ]
    assert texts == ["whole"]


async def test_stream_cut_after_tool_use_keeps_the_call_valid(tmp_path: Path) -> None:
    echo = Echo()
    cut = Reply(
        blocks=(
            *tools(("t1", "Echo", {"text": "a"})).blocks,
            TextBlock(text="never arrives"),
        ),
        cut_after=1,
        error=StreamInterruptedError("connection dropped"),
    )
    run = await run_loop([cut, text("recovered")], tmp_path, tools=[echo])
    assert echo.calls == ["a"]
    assert run.transitions == [Continue.NEXT_TURN]
    assert run.terminal.reason is Terminal.COMPLETED


async def test_stream_cut_repeatedly_ends_as_model_error(tmp_path: Path) -> None:
    cut = Reply(blocks=(TextBlock(text="a"),), cut_after=0, error=StreamInterruptedError("x"))
    run = await run_loop([cut, cut, cut], tmp_path)
    assert run.terminal.reason is Terminal.MODEL_ERROR
    assert len(run.provider.requests) == 3


async def test_stop_hook_blocks_then_allows(tmp_path: Path) -> None:
    seen: list[bool] = []

    async def hook(data: StopHookInput) -> StopHookResult | None:
        seen.append(data.stop_hook_active)
        if not data.stop_hook_active:
            return StopHookResult("block", "Run the tests before stopping.")
        return None

    run = await run_loop([text("done?"), text("tests pass")], tmp_path, stop_hooks=[hook])
    assert run.transitions == [Continue.STOP_HOOK_BLOCKING]
    assert run.terminal.reason is Terminal.COMPLETED
    assert seen == [False, True]
    second = run.provider.requests[1].messages
    assert "Run the tests before stopping." in str(second[-1])


async def test_stop_hook_prevents(tmp_path: Path) -> None:
    async def hook(data: StopHookInput) -> StopHookResult:
        return StopHookResult("prevent", "policy says stop")

    run = await run_loop([text("x")], tmp_path, stop_hooks=[hook])
    assert run.terminal.reason is Terminal.STOP_HOOK_PREVENTED
    assert run.terminal.detail == "policy says stop"


async def test_broken_stop_hook_does_not_end_the_session(tmp_path: Path) -> None:
    async def hook(data: StopHookInput) -> StopHookResult:
        raise RuntimeError("hook bug")

    run = await run_loop([text("x")], tmp_path, stop_hooks=[hook])
    assert run.terminal.reason is Terminal.COMPLETED


async def test_token_budget_nudges_until_diminishing_returns(tmp_path: Path) -> None:
    small = [text("bit", output_tokens=100) for _ in range(6)]
    run = await run_loop(small, tmp_path, token_budget=100_000)
    assert run.transitions == [Continue.TOKEN_BUDGET_CONTINUATION] * 2
    assert run.terminal.reason is Terminal.COMPLETED


async def test_token_budget_stops_when_nearly_spent(tmp_path: Path) -> None:
    run = await run_loop(
        [text("a", output_tokens=500), text("b", output_tokens=500)], tmp_path, token_budget=1000
    )
    assert run.transitions == [Continue.TOKEN_BUDGET_CONTINUATION]
    assert run.terminal.reason is Terminal.COMPLETED


async def test_max_turns_ends_after_tool_results(tmp_path: Path) -> None:
    call = tools(("t1", "Echo", {"text": "a"}))
    run = await run_loop([call], tmp_path, max_turns=1)
    assert run.terminal.reason is Terminal.MAX_TURNS
    last = run.terminal.messages[-1]
    assert isinstance(last, UserMessage) and not isinstance(last.content, str)
    assert last.content[0].type == "tool_result"


async def test_abort_during_streaming(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    slow = Reply(
        blocks=(*tools(("t1", "Echo", {"text": "a", "seconds": 5})).blocks, TextBlock(text="x")),
        delay=0.05,
    )

    def abort_soon(request: Any) -> Reply:
        asyncio.get_running_loop().call_later(0.08, ctx.abort.abort)
        return slow

    run = await run_loop([abort_soon], tmp_path, tool_context=ctx)
    assert run.terminal.reason is Terminal.ABORTED_STREAMING
    assert "interrupted" in str(run.terminal.messages[-1]).lower()


async def test_abort_during_tools(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)

    def abort_later(request: Any) -> Reply:
        asyncio.get_running_loop().call_later(0.2, ctx.abort.abort)
        return tools(("t1", "Echo", {"text": "a", "seconds": 10}))

    run = await run_loop([abort_later], tmp_path, tool_context=ctx)
    assert run.terminal.reason is Terminal.ABORTED_TOOLS
    results = [
        b
        for m in run.terminal.messages
        if isinstance(m, UserMessage) and not isinstance(m.content, str)
        for b in m.content
        if b.type == "tool_result"
    ]
    assert len(results) == 1 and results[0].is_error


class StoppingHooks:
    async def pre_tool_use(self, tool_name: str, input: Any, tool_use_id: str, ctx: Any) -> Any:
        return PreToolUseOutcome()

    async def post_tool_use(self, *args: Any) -> PostToolUseOutcome:
        return PostToolUseOutcome(stop_reason="hook says stop")


async def test_hook_stop_after_tools(tmp_path: Path) -> None:
    run = await run_loop(
        [tools(("t1", "Echo", {"text": "a"}))], tmp_path, tool_hooks=StoppingHooks()
    )
    assert run.terminal.reason is Terminal.HOOK_STOPPED
    assert run.terminal.detail == "hook says stop"


async def test_tools_start_while_the_model_still_streams(tmp_path: Path) -> None:
    echo = Echo()
    started: list[float] = []

    class Timed(Echo):
        async def call(self, input: EchoInput, ctx: ToolContext) -> AsyncIterator[Any]:
            started.append(asyncio.get_running_loop().time())
            async for item in super().call(input, ctx):
                yield item

    timed = Timed()
    reply = tools(
        ("t1", "Echo", {"text": "a", "seconds": 0.3}),
        ("t2", "Echo", {"text": "b", "seconds": 0.3}),
        ("t3", "Echo", {"text": "c", "seconds": 0.3}),
        delay=0.1,
    )
    run = await run_loop([reply, text("ok")], tmp_path, tools=[timed])
    assert run.terminal.reason is Terminal.COMPLETED
    assert len(started) == 3
    assert started[0] < run.provider.stream_ended_at[0]
    _ = echo


@pytest.mark.parametrize("streaming", [True, False])
async def test_both_tool_paths_give_the_same_results(tmp_path: Path, streaming: bool) -> None:
    run = await run_loop(
        [tools(("t1", "Echo", {"text": "a"}), ("t2", "Echo", {"text": "b"})), text("done")],
        tmp_path,
        streaming_tools=streaming,
    )
    assert run.terminal.reason is Terminal.COMPLETED
    results = run.provider.requests[1].messages[-1]["content"]
    assert [r["content"] for r in results] == ["echo: a", "echo: b"]
