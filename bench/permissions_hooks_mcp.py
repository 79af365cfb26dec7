"""Rough costs of a permission check, a shell hook and an MCP call (plain script, prints numbers).

.venv/bin/python bench/permissions_hooks_mcp.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from queryloop.hooks import CommandHook, HookMatcher, HookRunner, HooksConfig
from queryloop.permissions import PermissionChecker, PermissionContext, RuleSet
from queryloop.tools.base import BaseTool, ToolContext
from queryloop.tools.mcp import McpManager
from queryloop.tools.mcp_server import McpServerConfig

ROOT = Path(__file__).resolve().parent.parent


class _In(BaseModel):
    command: str


class _Bash(BaseTool[_In]):
    name = "Bash"
    input_model: type[BaseModel] = _In

    def permission_subject(self, input: Any) -> str | None:
        return str(input.command)


async def bench_checker(cwd: Path) -> None:
    rules = RuleSet.from_strings(
        allow=[f"Bash(tool{i}:*)" for i in range(50)] + ["Bash(git diff:*)", "Bash(npm test)"],
        deny=[f"Bash(bad{i}:*)" for i in range(50)] + ["Read(./.env)"],
    )
    checker = PermissionChecker(PermissionContext(rules=rules, home=cwd))
    ctx, tool = ToolContext(cwd=cwd), _Bash()
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        await checker.check(tool, {"command": "git diff HEAD && npm test | head -5"}, ctx)
    per = (time.perf_counter() - start) / n * 1e6
    print(f"permission check, 100 Bash rules, compound command: {per:.0f} µs/call")


async def bench_hook(cwd: Path) -> None:
    config = HooksConfig.of(PreToolUse=[HookMatcher("Bash", [CommandHook("cat > /dev/null")])])
    runner = HookRunner(config, cwd=cwd, session_id="bench")
    ctx = ToolContext(cwd=cwd)
    n = 50
    start = time.perf_counter()
    for _ in range(n):
        await runner.pre_tool_use("Bash", {"command": "ls"}, "t", ctx)
    print(f"PreToolUse shell hook round trip: {(time.perf_counter() - start) / n * 1e3:.1f} ms")


async def bench_mcp() -> None:
    server = ROOT / "tests" / "mcp" / "servers" / "echo_server.py"
    config = McpServerConfig("echo", command=sys.executable, args=(str(server),))
    start = time.perf_counter()
    async with McpManager({"echo": config}) as mcp:
        print(
            f"MCP stdio server start + handshake + tools/list: {time.perf_counter() - start:.2f} s"
        )
        n = 100
        t0 = time.perf_counter()
        for _ in range(n):
            await mcp.call_tool("echo", "echo", {"text": "x"})
        print(f"MCP tools/call round trip: {(time.perf_counter() - t0) / n * 1e3:.2f} ms")
        t1 = time.perf_counter()
    print(f"MCP shutdown: {time.perf_counter() - t1:.2f} s")


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        await bench_checker(Path(tmp))
        await bench_hook(Path(tmp))
    await bench_mcp()


if __name__ == "__main__":
    asyncio.run(main())
