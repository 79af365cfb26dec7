"""MCP servers that join the session after it started, and how long start-up waits for them.

`MCP_TIMEOUT` is Claude Code's variable for how long an MCP server may take to start, in
milliseconds (default 30000; docs/settings.md cites it); `MCP_TOOL_TIMEOUT` bounds one tool
call. Both are read from the environment and the settings' `env`, as Claude Code reads them.

With `mcp_wait=True` (the SDK, `-p`) `Agent.start()` waits for every server to connect or to
run out of `MCP_TIMEOUT`, all in parallel, and names the servers it gave up on. With
`mcp_wait=False` (the REPL) it does not wait: `SessionMcp.watch` waits for the servers still
connecting and, as each is ready, marks its tools loaded (the next request sends them, at
the end of the tools array) and says so in a notice. A server that failed joins the same way
once it is reconnected (`/mcp reconnect NAME`, or `/mcp login NAME` for one that needs a
login): `SessionMcp` is the one owner of which servers joined.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..tools.deferred import mark_loaded
from ..tools.mcp_server import login_target, named_server

if TYPE_CHECKING:
    from ..tools.base import Tool, ToolContext
    from ..tools.mcp import McpManager, McpServerStatus
    from ..tools.mcp_login import LoginResult
    from ..tools.mcp_tool import McpTool

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


class SessionMcp:
    """The session's MCP servers as the session sees them, and the one owner of which
    servers' tools joined after it started: a server still connecting at the start, or one
    that failed and was reconnected later (`Agent.mcp_reconnect`, `Agent.mcp_login`).

    A joining server's tools are marked loaded, so the next request sends them at the END of
    the tools array, like a deferred tool ToolSearch found: the bytes before them (the cached
    prefix) stay put. A server whose tools the session started with keeps their place when
    it reconnects (its tools call it by name; their definitions were sent as they were).
    Without a manager (no MCP servers) every question has an empty answer and every server
    name is unknown."""

    def __init__(self, manager: McpManager | None) -> None:
        self._manager = manager
        self.pending: tuple[str, ...] = tuple(manager.pending()) if manager else ()
        """The servers still connecting when the session started (`watch` joins them)."""
        now = [n for n in manager.statuses() if n not in self.pending] if manager else []
        self.at_start: tuple[McpTool, ...] = tuple(manager.tools(now)) if manager else ()
        """The tools of the servers connected at the start: fixed in the tools array."""
        self._fixed = frozenset(t.server for t in self.at_start)
        self._joined: dict[str, None] = {}
        """The servers whose tools joined since the start, in the order they joined."""

    @property
    def late(self) -> Callable[[], Sequence[Tool]] | None:
        """The tools of the servers that joined so far, asked for each time
        (`ToolSet.late`); None without servers."""
        manager, joined = self._manager, self._joined
        return (lambda: manager.tools(joined)) if manager is not None else None

    def statuses(self) -> dict[str, McpServerStatus]:
        """Each server's state and message, by name."""
        return self._manager.statuses() if self._manager is not None else {}

    def join(self, name: str, ctx: ToolContext) -> list[str]:
        """Server `name` (connected) joins: its tools are marked loaded in `ctx`, unless the
        session started with them. The names of its tools."""
        assert self._manager is not None
        tools = [t.name for t in self._manager.tools([name])]
        if name not in self._fixed:
            self._joined[name] = None
            mark_loaded(ctx, tools)
        return tools

    async def watch(self, ctx: ToolContext, notify: Callable[[str], None]) -> None:
        """Wait for each server still connecting at the start; as one is ready, it joins
        and `notify` says so; one that fails is named with its reason."""
        manager = self._manager
        if manager is None:
            return
        for ready in asyncio.as_completed([manager.wait_ready(n) for n in self.pending]):
            status = await ready
            if status.state != "connected":
                notify(f"MCP server {status.name!r} {status.message or status.state}")
                continue
            tools = self.join(status.name, ctx)
            notify(f"MCP server {status.name!r} connected: its {joined(len(tools))}")

    async def reconnect(self, name: str, ctx: ToolContext) -> McpServerStatus:
        """Connect server `name` afresh (`McpManager.reconnect`); once connected, its tools
        join (or keep their place). Raises McpLoginError for an unknown name."""
        manager = self._manager
        named_server(manager.configs() if manager is not None else {}, name)
        assert manager is not None
        status = await manager.reconnect(name)
        if status.state == "connected":
            self.join(name, ctx)
        return status

    async def login(
        self, name: str, show: Callable[[str], Awaitable[None]], ctx: ToolContext
    ) -> LoginResult:
        """Log in to server `name` (`tools.mcp_login.login`: `show` presents the URL), then
        reconnect it in the session with the stored tokens. Raises McpLoginError for an
        unknown name, a server without a login, or the callback port in use."""
        from ..tools.mcp_login import LoginResult, login

        config = login_target(self._manager.configs() if self._manager else {}, name)
        result = await login(config, show)
        if result.status.state != "connected":
            return result
        return LoginResult(await self.reconnect(name, ctx), result.asked)


def joined(count: int) -> str:
    """'N tools join from the next request' (the notices and the REPL say it)."""
    return f"{count} tool{' joins' if count == 1 else 's join'} from the next request"
