"""run_tool_call: lookup, validation, hooks, permissions, results, errors, truncation."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from pydantic import BaseModel
from tools_test_support import call

from queryloop.messages.blocks import ToolUseBlock
from queryloop.messages.constructors import meta_user_message
from queryloop.messages.types import AttachmentMessage, ProgressMessage, UserMessage
from queryloop.tools import (
    BaseTool,
    PermissionDecision,
    PostToolUseOutcome,
    PreToolUseOutcome,
    Tool,
    ToolContext,
    ToolError,
    ToolProgress,
    ToolResult,
    run_tool_call,
)
from queryloop.tools.execution import HARD_CAP_FACTOR


class EchoInput(BaseModel):
    text: str
    times: int = 1


class EchoTool(BaseTool[EchoInput]):
    name = "Echo"
    input_model: type[BaseModel] = EchoInput

    def __init__(
        self,
        *,
        own: PermissionDecision | None = None,
        problem: str | None = None,
        raises: BaseException | None = None,
        max_chars: int | None = None,
    ) -> None:
        self.own = own
        self.problem = problem
        self.raises = raises
        self.calls: list[EchoInput] = []
        if max_chars is not None:
            self.max_result_chars = max_chars

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        return self.problem

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        return self.own or await super().check_permissions(input, ctx)

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        self.calls.append(input)
        yield ToolProgress({"step": 1})
        if self.raises is not None:
            raise self.raises
        yield ToolResult(
            content=input.text * input.times, new_messages=(meta_user_message("extra"),)
        )


async def test_happy_path_yields_progress_result_then_extras(ctx: ToolContext) -> None:
    got = await call(EchoTool(), {"text": "ab", "times": 2}, ctx)
    assert (got.text, got.is_error) == ("abab", False)
    kinds = [type(m).__name__ for m in got.messages]
    assert kinds == ["ProgressMessage", "UserMessage", "UserMessage"]
    progress = got.messages[0]
    assert isinstance(progress, ProgressMessage)
    assert progress.tool_use_id == "toolu_1" and progress.parent_tool_use_id == "toolu_1"


async def test_unknown_tool_names_the_available_ones(ctx: ToolContext) -> None:
    got = await call(EchoTool(), {}, ctx, name="Ech0")
    assert got.is_error
    assert "No such tool available: Ech0" in got.text and "Available tools: Echo" in got.text


async def test_bad_input_is_an_actionable_error(ctx: ToolContext) -> None:
    tool = EchoTool()
    got = await call(tool, {"times": "x"}, ctx)
    assert got.is_error and not tool.calls
    assert got.text.startswith("InputValidationError: Echo failed due to the following issues")
    assert "`text` is required" in got.text and "`times`" in got.text
    single = await call(tool, {}, ctx)
    assert single.text == "InputValidationError: Echo failed: `text` is required"


async def test_validate_input_problem_is_returned(ctx: ToolContext) -> None:
    tool = EchoTool(problem="text must be shouted")
    got = await call(tool, {"text": "hi"}, ctx)
    assert (got.text, got.is_error) == ("text must be shouted", True)
    assert not tool.calls


class Hooks:
    def __init__(
        self, pre: PreToolUseOutcome | None = None, post: PostToolUseOutcome | None = None
    ) -> None:
        self.pre = pre or PreToolUseOutcome()
        self.post = post or PostToolUseOutcome()
        self.seen: list[tuple[str, Mapping[str, Any]]] = []

    async def pre_tool_use(
        self, tool_name: str, input: Mapping[str, Any], tool_use_id: str, ctx: ToolContext
    ) -> PreToolUseOutcome:
        self.seen.append(("pre", input))
        return self.pre

    async def post_tool_use(
        self,
        tool_name: str,
        input: Mapping[str, Any],
        result: ToolResult,
        tool_use_id: str,
        ctx: ToolContext,
    ) -> PostToolUseOutcome:
        self.seen.append(("post", input))
        return self.post


async def test_pre_hook_deny_blocks_the_call(ctx: ToolContext) -> None:
    tool = EchoTool()
    hooks = Hooks(pre=PreToolUseOutcome(decision="deny", reason="no echoes today"))
    got = await call(tool, {"text": "hi"}, ctx, hooks=hooks)
    assert got.is_error and "no echoes today" in got.text and not tool.calls


async def test_pre_hook_updated_input_and_stop_reason(ctx: ToolContext) -> None:
    tool = EchoTool()
    hooks = Hooks(pre=PreToolUseOutcome(updated_input={"text": "new"}, stop_reason="halt"))
    got = await call(tool, {"text": "old"}, ctx, hooks=hooks)
    assert got.text == "new" and got.outcome.stop_reason == "halt"
    assert hooks.seen[0] == ("pre", {"text": "old", "times": 1})
    assert hooks.seen[1] == ("post", {"text": "new", "times": 1})


async def test_post_hook_context_block_and_stop(ctx: ToolContext) -> None:
    post = PostToolUseOutcome(
        additional_context="lint: ok", block_reason="secret leaked", stop_reason="stop now"
    )
    got = await call(EchoTool(), {"text": "hi"}, ctx, hooks=Hooks(post=post))
    assert got.is_error
    assert got.text.startswith("hi") and "secret leaked" in got.text
    assert got.outcome.stop_reason == "stop now"
    last = got.messages[-1]
    assert isinstance(last, AttachmentMessage)
    assert last.attachment.type == "text" and last.attachment.data == {"content": "lint: ok"}
    result_index = next(i for i, m in enumerate(got.messages) if isinstance(m, UserMessage))
    assert result_index < len(got.messages) - 1


class Checker:
    def __init__(self, decision: PermissionDecision) -> None:
        self.decision = decision
        self.asked: list[tuple[str, Mapping[str, Any]]] = []

    async def check(
        self, tool: Tool, input: Mapping[str, Any], ctx: ToolContext, *, hook: Any = None
    ) -> PermissionDecision:
        self.asked.append((tool.name, input))
        return self.decision


async def test_permission_deny_and_allow_with_updated_input(ctx: ToolContext) -> None:
    tool = EchoTool()
    denied = await call(
        tool,
        {"text": "hi"},
        ctx,
        permission=Checker(PermissionDecision("deny", "not in plan mode")),
    )
    assert denied.is_error
    assert denied.text == "Permission to use Echo was denied: not in plan mode"
    assert not tool.calls
    allow = Checker(PermissionDecision("allow", updated_input={"text": "safe"}))
    got = await call(tool, {"text": "hi"}, ctx, permission=allow)
    assert got.text == "safe" and allow.asked == [("Echo", {"text": "hi", "times": 1})]


async def test_tool_own_ask_is_allowed_without_a_checker(ctx: ToolContext) -> None:
    tool = EchoTool(own=PermissionDecision("ask", "outside the project"))
    assert (await call(tool, {"text": "hi"}, ctx)).text == "hi"
    refused = await call(tool, {"text": "hi"}, ctx, permission=Checker(PermissionDecision("ask")))
    assert refused.is_error and "Permission to use Echo was denied" in refused.text


async def test_tool_own_deny_wins(ctx: ToolContext) -> None:
    tool = EchoTool(own=PermissionDecision("deny", "never"))
    got = await call(tool, {"text": "hi"}, ctx, permission=Checker(PermissionDecision("allow")))
    assert got.is_error and got.text == "Permission to use Echo was denied: never"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ToolError("disk is full"), "disk is full"),
        (RuntimeError("boom"), "Error: RuntimeError: boom"),
    ],
)
async def test_exceptions_become_error_results(
    ctx: ToolContext, error: Exception, expected: str
) -> None:
    got = await call(EchoTool(raises=error), {"text": "hi"}, ctx)
    assert (got.text, got.is_error) == (expected, True)


async def test_cancellation_propagates(ctx: ToolContext) -> None:
    gate = asyncio.Event()

    class Waits(EchoTool):
        async def call(
            self, input: Any, ctx: ToolContext
        ) -> AsyncIterator[ToolProgress | ToolResult]:
            gate.set()
            await asyncio.sleep(30)
            yield ToolResult(content="never")

    block = ToolUseBlock(id="t", name="Echo", input={"text": "x"})

    async def consume() -> list[Any]:
        return [m async for m in run_tool_call(block, [Waits()], ctx)]

    task = asyncio.create_task(consume())
    await gate.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_results_over_the_tools_maximum_are_left_for_the_budget_to_spill(
    ctx: ToolContext,
) -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"
    got = await call(EchoTool(max_chars=1000), {"text": text}, ctx)
    assert got.text == text


async def test_huge_results_keep_head_and_tail(ctx: ToolContext) -> None:
    text = "HEAD" + "x" * 50_000 + "TAIL"
    got = await call(EchoTool(max_chars=1000), {"text": text}, ctx)
    assert got.text.startswith("HEAD") and got.text.endswith("TAIL")
    assert len(got.text) < 1000 * HARD_CAP_FACTOR + 200
    assert "characters truncated" in got.text and str(len(text)) in got.text


async def test_empty_result_gets_a_placeholder(ctx: ToolContext) -> None:
    got = await call(EchoTool(), {"text": ""}, ctx)
    assert got.text == "(Echo completed with no output)" and not got.is_error


async def test_a_broken_post_hook_keeps_the_tool_result(ctx: ToolContext) -> None:
    class Broken(Hooks):
        async def post_tool_use(self, *args: Any) -> PostToolUseOutcome:
            raise RuntimeError("hook crashed")

    got = await call(EchoTool(), {"text": "done"}, ctx, hooks=Broken())
    assert not got.is_error
    assert got.text == "done\n\n(PostToolUse hook failed: RuntimeError: hook crashed)"
