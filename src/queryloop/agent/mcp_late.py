"""MCP servers that connect after the session started, and how long start-up waits for them.

`MCP_TIMEOUT` is Claude Code's variable for how long an MCP server may take to start, in
milliseconds (default 30000; docs/mcp.md cites it); `MCP_TOOL_TIMEOUT` bounds one tool call.
Both are read from the environment and the settings' `env`, as Claude Code reads them.

With `mcp_wait=True` (the SDK, `-p`) `Agent.start()` waits for every server to connect or to
run out of `MCP_TIMEOUT`, all in parallel, and names the servers it gave up on. With
`mcp_wait=False` (the REPL) it does not wait: `join_late_servers` watches the servers still
connecting and, as each is ready, marks its tools loaded (the next request sends them, at
the end of the tools array) and says so in a notice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..tools.deferred import mark_loaded

if TYPE_CHECKING:
    from ..tools.base import ToolContext
    from ..tools.mcp import McpManager

TIMEOUT_VAR = "MCP_TIMEOUT"
TOOL_TIMEOUT_VAR = "MCP_TOOL_TIMEOUT"
DEFAULT_TIMEOUT_MS = 30_000
"""Claude Code's default for `MCP_TIMEOUT` (anthropics/claude-code#42770)."""
DEFAULT_TOOL_TIMEOUT_MS = 600_000
"""queryloop's default for one MCP tool call (`McpManager`'s 600 s)."""


@dataclass(frozen=True)
class McpTimeouts:
    """How long a server may take to connect and a tool call to answer, in seconds, and what
    was wrong with the variables."""

    connect_s: float = DEFAULT_TIMEOUT_MS / 1000
    call_s: float = DEFAULT_TOOL_TIMEOUT_MS / 1000
    problem: str = ""

    @classmethod
    def of(cls, env: Mapping[str, str]) -> McpTimeouts:
        """From `MCP_TIMEOUT` and `MCP_TOOL_TIMEOUT` in `env`; a value that is not a positive
        number of milliseconds is not used, and `problem` says so."""
        values: dict[str, int] = {}
        problems: list[str] = []
        for name, fallback in (
            (TIMEOUT_VAR, DEFAULT_TIMEOUT_MS),
            (TOOL_TIMEOUT_VAR, DEFAULT_TOOL_TIMEOUT_MS),
        ):
            raw = env.get(name, "").strip()
            values[name] = fallback
            if raw and raw.isdigit() and int(raw) > 0:
                values[name] = int(raw)
            elif raw:
                problems.append(f"{name}={raw!r} is not a number of milliseconds; using {fallback}")
        return cls(values[TIMEOUT_VAR] / 1000, values[TOOL_TIMEOUT_VAR] / 1000, "; ".join(problems))


def gave_up(mcp: McpManager) -> list[str]:
    """The notices for servers that are not connected once start-up stopped waiting."""
    return [
        f"MCP server {s.name!r} {s.message or s.state}; going on without its tools"
        for s in mcp.statuses().values()
        if s.state not in ("connected", "pending")
    ]


async def join_late_servers(
    mcp: McpManager, names: list[str], ctx: ToolContext, notify: Callable[[str], None]
) -> None:
    """Wait for each of `names` (servers still connecting); as one is ready, its tools join
    (marked loaded: the next request sends them) and `notify` says so; one that fails is
    named with its reason."""
    waits = [mcp.wait_ready(name) for name in names]
    for ready in asyncio.as_completed(waits):
        status = await ready
        if status.state != "connected":
            notify(f"MCP server {status.name!r} {status.message or status.state}")
            continue
        tools = [t.name for t in mcp.tools([status.name])]
        mark_loaded(ctx, tools)
        count = f"{len(tools)} tool{'s' if len(tools) != 1 else ''}"
        notify(f"MCP server {status.name!r} connected: its {count} join from the next request")
