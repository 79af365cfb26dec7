"""StreamingToolExecutor and run_tools: scheduling, ordering, cancellation, abort."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from tools_test_support import block_text, result_block, wait_until

from queryloop.messages.blocks import ToolUseBlock
from queryloop.messages.interruption import INTERRUPTED_FOR_TOOL_USE
from queryloop.messages.types import Message, ProgressMessage, UserMessage
from queryloop.tools import (
    BaseTool,
    PostToolUseOutcome,
    PreToolUseOutcome,
    StreamingToolExecutor,
    ToolContext,
    ToolProgress,
    ToolResult,
    ToolRun,
    partition_tool_calls,
    run_tools,
)
from queryloop.tools.builtin import BashTool


class SleepInput(BaseModel):
    seconds: float = 0.0
    fail: bool = False


class SleepTool(BaseTool[SleepInput]):
    """Sleeps, records when its body ran, optionally waits on a gate and reports progress."""

    input_model: type[BaseModel] = SleepInput

    def __init__(self, name: str, *, safe: bool) -> None:
        self.name = name
        self.concurrency_safe = safe
        self.started: dict[str, float] = {}
        self.cancelled: list[float] = []
        self.gate: asyncio.Event | None = None

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        self.started[f"{input.seconds}"] = time.monotonic()
        yield ToolProgress({"status": "started"})
        try:
            if self.gate is not None:
                await self.gate.wait()
            await asyncio.sleep(input.seconds)
        except asyncio.CancelledError:
            self.cancelled.append(time.monotonic())
            raise
        yield ToolResult(content=f"slept {input.seconds}", is_error=input.fail)


def use(tool_id: str, name: str, **input: Any) -> ToolUseBlock:
    return ToolUseBlock(id=tool_id, name=name, input=input)


def results(messages: list[Message]) -> list[tuple[str, str, bool]]:
    out = []
    for m in messages:
        if isinstance(m, UserMessage):
            rb = result_block(m)
            out.append((rb.tool_use_id, block_text(rb), rb.is_error))
    return out


async def drain(executor: StreamingToolExecutor) -> list[Message]:
    return [m async for m in executor.get_remaining_results()]


def end(timing: tuple[float, float | None]) -> float:
    """When a call ended (it has)."""
    assert timing[1] is not None
    return timing[1]


def ctx_for(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


async def test_three_safe_tools_overlap_and_results_keep_tool_use_order(tmp_path: Path) -> None:
    safe = SleepTool("Nap", safe=True)
    ex = StreamingToolExecutor([safe], ctx_for(tmp_path))
    # The first call is the slowest: it finishes last but its result must still come first.
    for i, seconds in enumerate((0.3, 0.2, 0.1)):
        ex.add_tool(use(f"t{i}", "Nap", seconds=seconds))
    out = results(await drain(ex))
    assert [r[0] for r in out] == ["t0", "t1", "t2"]
    starts = [ex.timings[f"t{i}"][0] for i in range(3)]
    ends = [end(ex.timings[f"t{i}"]) for i in range(3)]
    assert max(starts) < min(ends)
    assert ends[2] < ends[0]


async def test_unsafe_call_waits_for_running_ones_and_blocks_the_queue(tmp_path: Path) -> None:
    safe, unsafe = SleepTool("Look", safe=True), SleepTool("Change", safe=False)
    ex = StreamingToolExecutor([safe, unsafe], ctx_for(tmp_path))
    ex.add_tool(use("a", "Look", seconds=0.05))
    ex.add_tool(use("b", "Look", seconds=0.06))
    ex.add_tool(use("c", "Change", seconds=0.05))
    ex.add_tool(use("d", "Look", seconds=0.01))
    out = results(await drain(ex))
    assert [r[0] for r in out] == ["a", "b", "c", "d"]
    t = ex.timings
    assert t["c"][0] >= max(end(t["a"]), end(t["b"]))
    assert t["d"][0] >= end(t["c"])
    assert t["b"][0] < end(t["a"])


async def test_max_concurrency_bounds_parallel_calls(tmp_path: Path) -> None:
    safe = SleepTool("Nap", safe=True)
    ex = StreamingToolExecutor([safe], ctx_for(tmp_path), max_concurrency=2)
    for i in range(3):
        ex.add_tool(use(f"t{i}", "Nap", seconds=0.05 + i / 1000))
    await drain(ex)
    t = ex.timings
    assert t["t1"][0] < end(t["t0"])
    assert t["t2"][0] >= min(end(t["t0"]), end(t["t1"]))


async def test_tools_start_while_blocks_are_still_arriving(tmp_path: Path) -> None:
    safe = SleepTool("Nap", safe=True)
    ex = StreamingToolExecutor([safe], ctx_for(tmp_path))
    ex.add_tool(use("t0", "Nap", seconds=0.2))
    await asyncio.sleep(0.05)  # the model is still streaming the next block
    ex.add_tool(use("t1", "Nap", seconds=0.21))
    await asyncio.sleep(0.05)
    last_added = time.monotonic()
    ex.add_tool(use("t2", "Nap", seconds=0.22))
    assert safe.started["0.2"] < last_added
    early = ex.get_completed_results()
    assert all(isinstance(m, ProgressMessage) for m in early) and early
    out = results(await drain(ex))
    assert [r[0] for r in out] == ["t0", "t1", "t2"]


async def test_progress_streams_before_results_and_out_of_order(tmp_path: Path) -> None:
    slow, fast = SleepTool("Slow", safe=True), SleepTool("Fast", safe=True)
    slow.gate = asyncio.Event()
    ex = StreamingToolExecutor([slow, fast], ctx_for(tmp_path))
    ex.add_tool(use("s", "Slow"))
    ex.add_tool(use("f", "Fast"))
    await wait_until(lambda: "0.0" in fast.started and "0.0" in slow.started)
    await asyncio.sleep(0.02)
    ready = ex.get_completed_results()
    # Both progress messages are out; Fast's result waits for Slow's (tool_use order).
    assert {m.tool_use_id for m in ready if isinstance(m, ProgressMessage)} == {"s", "f"}
    assert not results(ready)
    progress = next(m for m in ready if isinstance(m, ProgressMessage))
    assert progress.parent_tool_use_id == progress.tool_use_id
    slow.gate.set()
    assert [r[0] for r in results(await drain(ex))] == ["s", "f"]


async def test_failing_bash_cancels_running_siblings(tmp_path: Path) -> None:
    nap = SleepTool("Nap", safe=True)
    ex = StreamingToolExecutor([nap, BashTool()], ctx_for(tmp_path))
    ex.add_tool(use("n", "Nap", seconds=30))
    ex.add_tool(use("tail", "Bash", command="tail -f /dev/null"))
    ex.add_tool(use("bad", "Bash", command="cat does-not-exist.txt"))
    out = {r[0]: r[1:] for r in results(await drain(ex))}
    assert out["bad"][1] and "does-not-exist.txt" in out["bad"][0]
    for sibling in ("n", "tail"):
        assert out[sibling] == ("Cancelled: a parallel Bash command failed", True)
    assert nap.cancelled


async def test_failing_non_bash_tool_does_not_cancel_siblings(tmp_path: Path) -> None:
    nap = SleepTool("Nap", safe=True)
    ex = StreamingToolExecutor([nap], ctx_for(tmp_path))
    ex.add_tool(use("slow", "Nap", seconds=0.1))
    ex.add_tool(use("bad", "Nap", seconds=0.0, fail=True))
    out = results(await drain(ex))
    assert out == [("slow", "slept 0.1", False), ("bad", "slept 0.0", True)]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


async def test_abort_kills_a_long_bash_and_interrupts_unfinished_calls(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    nap = SleepTool("Nap", safe=True)
    ex = StreamingToolExecutor([BashTool(), nap], ctx)
    ex.add_tool(use("quick", "Nap", seconds=0.0))
    ex.add_tool(use("long", "Bash", command="sleep 30 & echo $! > pid.txt; wait"))
    ex.add_tool(use("queued", "Nap", seconds=0.0))
    pid_file = tmp_path / "pid.txt"
    await wait_until(lambda: pid_file.exists() and pid_file.read_text().strip() != "")
    pid = int((tmp_path / "pid.txt").read_text())
    assert _alive(pid)
    ctx.abort.abort()
    out = results(await drain(ex))
    assert ex.aborted
    assert out[0] == ("quick", "slept 0.0", False)
    assert out[1:] == [
        ("long", INTERRUPTED_FOR_TOOL_USE, True),
        ("queued", INTERRUPTED_FOR_TOOL_USE, True),
    ]
    for _ in range(200):  # the orphaned sleep is reaped by init at its own pace
        if not _alive(pid):
            break
        await asyncio.sleep(0.01)
    assert not _alive(pid)


async def test_add_tool_after_abort_gives_interrupted_result(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    nap = SleepTool("Nap", safe=True)
    ctx.abort.abort()
    ex = StreamingToolExecutor([nap], ctx)
    ex.add_tool(use("x", "Nap"))
    assert results(ex.get_completed_results()) == [("x", INTERRUPTED_FOR_TOOL_USE, True)]
    assert not nap.started and ex.aborted


async def test_discard_cancels_everything_and_yields_nothing(tmp_path: Path) -> None:
    nap = SleepTool("Nap", safe=True)
    ex = StreamingToolExecutor([nap], ctx_for(tmp_path))
    ex.add_tool(use("a", "Nap", seconds=30))
    await wait_until(lambda: bool(nap.started))
    ex.discard("stream fell back")
    assert ex.get_completed_results() == []
    assert await drain(ex) == []
    assert nap.cancelled
    ex.add_tool(use("b", "Nap"))
    assert ex.get_completed_results() == []


class StopHooks:
    async def pre_tool_use(self, tool_name: str, input: Any, tool_use_id: str, ctx: Any) -> Any:
        return PreToolUseOutcome(stop_reason="enough" if tool_use_id == "b" else None)

    async def post_tool_use(self, *args: Any) -> Any:
        return PostToolUseOutcome()


async def test_hook_stop_request_is_exposed(tmp_path: Path) -> None:
    nap = SleepTool("Nap", safe=True)
    ex = StreamingToolExecutor([nap], ctx_for(tmp_path), hooks=StopHooks())
    ex.add_tool(use("a", "Nap"))
    ex.add_tool(use("b", "Nap"))
    assert len(results(await drain(ex))) == 2
    assert ex.stop_reason == "enough"


async def test_unknown_tool_and_bad_input_still_get_results_in_order(tmp_path: Path) -> None:
    nap = SleepTool("Nap", safe=True)
    ex = StreamingToolExecutor([nap], ctx_for(tmp_path))
    ex.add_tool(use("a", "Nope"))
    ex.add_tool(use("b", "Nap", seconds="soon"))
    ex.add_tool(use("c", "Nap"))
    out = results(await drain(ex))
    assert [r[0] for r in out] == ["a", "b", "c"]
    assert out[0][2] and "Available tools: Nap" in out[0][1]
    assert out[1][2] and "`seconds`" in out[1][1]
    assert not out[2][2]


def test_partition_groups_consecutive_safe_calls() -> None:
    tools = [SleepTool("Look", safe=True), SleepTool("Change", safe=False)]
    blocks = [
        use(n, t)
        for n, t in [("1", "Look"), ("2", "Look"), ("3", "Change"), ("4", "Change"), ("5", "Look")]
    ]
    batches = partition_tool_calls(blocks, tools)
    assert [[b.id for b in batch] for batch in batches] == [["1", "2"], ["3"], ["4"], ["5"]]


async def test_run_tools_runs_batches_in_order(tmp_path: Path) -> None:
    tools = [SleepTool("Look", safe=True), SleepTool("Change", safe=False)]
    blocks = [
        use("1", "Look", seconds=0.05),
        use("2", "Look", seconds=0.05),
        use("3", "Change", seconds=0.01),
        use("4", "Look"),
    ]
    plain = results([m async for m in run_tools(blocks, tools, ctx_for(tmp_path))])
    assert [r[0] for r in plain] == ["1", "2", "3", "4"]
    run = ToolRun(blocks, tools, ctx_for(tmp_path))
    assert [r[0] for r in results([m async for m in run])] == ["1", "2", "3", "4"]
    t = run.timings
    assert t["2"][0] < end(t["1"])
    assert t["3"][0] >= max(end(t["1"]), end(t["2"]))
    assert not run.aborted and run.stop_reason is None


async def test_bash_cwd_is_shared_across_calls_through_the_executor(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    ctx = ctx_for(tmp_path)
    ex = StreamingToolExecutor([BashTool()], ctx)
    ex.add_tool(use("1", "Bash", command="cd sub"))
    ex.add_tool(use("2", "Bash", command="pwd"))
    out = results(await drain(ex))
    assert out[1][1].strip() == os.path.realpath(tmp_path / "sub")


async def test_cancelling_the_consumer_cancels_running_tools(tmp_path: Path) -> None:
    nap = SleepTool("Nap", safe=True)
    ex = StreamingToolExecutor([nap], ctx_for(tmp_path))
    ex.add_tool(use("a", "Nap", seconds=30))
    consumer = asyncio.create_task(drain(ex))
    await wait_until(lambda: bool(nap.started))
    consumer.cancel()
    await asyncio.gather(consumer, return_exceptions=True)
    await wait_until(lambda: bool(nap.cancelled))


class SelfCancelling(SleepTool):
    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        raise asyncio.CancelledError
        yield


async def test_a_tool_raising_cancelled_error_gets_an_error_result(tmp_path: Path) -> None:
    ex = StreamingToolExecutor([SelfCancelling("Odd", safe=True)], ctx_for(tmp_path))
    ex.add_tool(use("a", "Odd"))
    out = results(await drain(ex))
    assert out == [("a", "Odd was cancelled unexpectedly", True)]
