"""Tool executor overhead: framework time per tool call, excluding the tools' own work.

Plain script: `python bench/tool_executor.py`. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from queryloop.messages.blocks import ToolUseBlock
from queryloop.tools import BaseTool, StreamingToolExecutor, ToolContext, ToolResult, run_tools
from queryloop.tools.builtin import BashTool, ReadTool


class NoopInput(BaseModel):
    n: int = 0


class Noop(BaseTool[NoopInput]):
    name = "Noop"
    input_model: type[BaseModel] = NoopInput
    concurrency_safe = True

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolResult]:
        yield ToolResult(content="ok")


class Nap(Noop):
    name = "Nap"

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolResult]:
        await asyncio.sleep(0.3)
        yield ToolResult(content="ok")


async def per_call_overhead(n: int, ctx: ToolContext) -> float:
    blocks = [ToolUseBlock(id=f"t{i}", name="Noop", input={"n": i}) for i in range(n)]
    start = time.perf_counter()
    count = len([m async for m in run_tools(blocks, [Noop()], ctx)])
    assert count == n
    return (time.perf_counter() - start) / n


async def three_parallel(ctx: ToolContext) -> float:
    ex = StreamingToolExecutor([Nap()], ctx)
    start = time.perf_counter()
    for i in range(3):
        ex.add_tool(ToolUseBlock(id=f"n{i}", name="Nap", input={}))
    _ = [m async for m in ex.get_remaining_results()]
    return time.perf_counter() - start


async def builtin_latency(ctx: ToolContext, tool: Any, input: dict[str, Any], n: int) -> float:
    start = time.perf_counter()
    for i in range(n):
        _ = [
            m
            async for m in run_tools(
                [ToolUseBlock(id=f"b{i}", name=tool.name, input=input)], [tool], ctx
            )
        ]
    return (time.perf_counter() - start) / n


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ctx = ToolContext(cwd=Path(tmp))
        (Path(tmp) / "f.txt").write_text("".join(f"line {i}\n" for i in range(2000)))
        for n in (10, 100, 1000):
            overhead = await per_call_overhead(n, ctx)
            print(f"run_tools, {n:>4} no-op calls: {overhead * 1e6:8.1f} µs/call")
        print(f"three 0.3 s safe tools in parallel: {await three_parallel(ctx):.3f} s wall")
        read = await builtin_latency(ctx, ReadTool(), {"file_path": "f.txt"}, 50)
        print(f"Read of a 2000-line file: {read * 1e3:.2f} ms/call")
        bash = await builtin_latency(ctx, BashTool(), {"command": "true"}, 20)
        print(f"Bash `true`: {bash * 1e3:.2f} ms/call")


if __name__ == "__main__":
    asyncio.run(main())
