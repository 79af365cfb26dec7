"""MCP servers as queryloop tools, through the official `mcp` client.

`McpManager` starts every configured server (stdio, streamable HTTP or HTTP+SSE), lists its tools as
`McpTool`s named `mcp__<server>__<tool>`, exposes server instructions and resources, and shuts
everything down cleanly. Each server lives in one task that owns its `AsyncExitStack` (the MCP
client's anyio scopes must be entered and exited by the same task); other tasks only send
requests through the session.

A server that fails to start or dies later is reported in `statuses()` with a message (the
tail of its stderr when there is one); the session goes on and calls to its tools return an
is_error result saying the server is unavailable. `reconnect(name)` replaces one server's
connection with a new one (after a login, or once the server is fixed); the tools hold the
server's name, not its connection, so calls go to the new one.

Those tasks run on an `McpLoop` (an event loop in a thread of its own, `mcp_loop`), not on
the caller's loop: `start`, `close` and every request are sent there, so the servers start and
answer while the caller's thread is busy with synchronous work. `launch_mcp` uses that to
start the servers before this module (and the SDK) is even imported.

Shutdown is the MCP spec's (close stdin, wait, SIGTERM, SIGKILL) with short waits: the SDK
waits 2 s for a server to exit on its own and every exit paid it; see `STDIO_EXIT_GRACE`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import tempfile
from collections.abc import Collection, Coroutine, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar, cast

import anyio
import mcp.client.stdio as sdk_stdio
import mcp_types as mt
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from .base import ToolResult
from .mcp_auth import AuthAttempt, Interactive, McpAuthError, McpLoginRequired, client_auth
from .mcp_convert import Block, convert_call_result, convert_resource_contents
from .mcp_loop import McpLoop
from .mcp_server import McpServerConfig
from .mcp_tool import McpTool

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_CALL_TIMEOUT = 600.0
DEFAULT_CONNECT_TIMEOUT = 30.0

STDIO_EXIT_GRACE = 0.1
"""Seconds a stdio server has to exit after its stdin is closed before it gets SIGTERM. The
SDK's default (2 s) made every exit wait for a server's own interpreter teardown (0.2-0.3 s
for a Python server, often more on a loaded machine); SIGTERM is the spec's next, still
graceful step."""
STDIO_KILL_GRACE = 0.5
"""Seconds after SIGTERM before SIGKILL (only a server that ignores SIGTERM waits this)."""

ServerState = Literal["pending", "connected", "failed", "closed"]


def bound_stdio_shutdown() -> None:
    """Apply our shutdown waits to the SDK's stdio client. They are module-level policy there,
    read at every shutdown, with no parameter to pass them by: so they are set when queryloop
    starts its own servers (`McpManager.start`), never by importing queryloop, which leaves
    the SDK as it is for a program that uses it for itself. tests/mcp check the names still
    exist."""
    sdk_stdio.PROCESS_TERMINATION_TIMEOUT = STDIO_EXIT_GRACE
    sdk_stdio.FORCE_KILL_TIMEOUT = STDIO_KILL_GRACE


@dataclass(frozen=True, slots=True)
class McpServerStatus:
    """How one server is doing, for `/mcp`-style listings and startup notices."""

    name: str
    state: ServerState
    message: str = ""
    tool_count: int = 0


@dataclass(frozen=True, slots=True)
class McpResource:
    """A resource a server offers (for @-mentions: `@server:uri`)."""

    server: str
    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>` with characters the model API rejects replaced by `_`."""
    clean = re.sub(r"[^A-Za-z0-9_-]", "_", f"mcp__{server}__{tool}")
    return clean[:64]  # the tool-name limit older API versions and other providers enforce


class _Server:
    """One connection, owned by one task from connect to close."""

    def __init__(
        self,
        config: McpServerConfig,
        connect_timeout: float,
        cwd: Path | None,
        login: Interactive | None = None,
    ) -> None:
        self.config = config
        self.login = login
        self.auth = AuthAttempt()
        self.cwd = config.cwd or cwd
        self.connect_timeout = connect_timeout
        self.state: ServerState = "pending"
        self.message = ""
        self.session: ClientSession | None = None
        self.tools: list[mt.Tool] = []
        self.instructions: str | None = None
        # The server's stderr goes to a file we can quote when it fails, not over our terminal.
        self.errlog = cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
        self.ready = asyncio.Event()
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def own(self) -> None:
        """The task body: connect, serve until asked to stop, then unwind in this same task."""
        try:
            async with AsyncExitStack() as stack:
                session = await self._connect(stack)
                self.session, self.state = session, "connected"
                self.ready.set()
                await self.stop.wait()
        except Exception as exc:  # includes ExceptionGroup from the client's task groups
            if self.auth.login_required:  # however the transport wrapped it, say the fix
                self.fail(str(McpLoginRequired(self.config.name)))
            elif self.ready.is_set():
                self.fail(f"stopped: {_leaf(exc)}")
            elif _timed_out(exc):
                self.fail(f"did not connect within {self.connect_timeout:g} s (MCP_TIMEOUT)")
            else:
                self.fail(f"failed to start: {_leaf(exc)}")
        finally:
            self.session = None
            if self.state in ("connected", "pending"):  # pending: cancelled while connecting
                self.state = "closed"
            self.ready.set()

    async def _connect(self, stack: AsyncExitStack) -> ClientSession:
        cfg = self.config
        auth = None if cfg.transport == "stdio" else client_auth(cfg, self.auth, self.login)
        if cfg.transport == "sse":
            read, write = await stack.enter_async_context(
                sse_client(cfg.url, headers=dict(cfg.headers) or None, auth=auth)
            )
        elif cfg.transport == "http":
            client = create_mcp_http_client(headers=dict(cfg.headers) or None, auth=auth)
            await stack.enter_async_context(client)
            read, write = await stack.enter_async_context(
                streamable_http_client(cfg.url, http_client=client)
            )
        else:
            params = StdioServerParameters(
                command=cfg.command, args=list(cfg.args), env=dict(cfg.env) or None, cwd=self.cwd
            )
            read, write = await stack.enter_async_context(stdio_client(params, errlog=self.errlog))
        session = await stack.enter_async_context(ClientSession(read, write))
        # The deadline covers only the handshake: a cancel scope must not span the contexts
        # entered above, which stay open (anyio scopes nest strictly).
        with anyio.fail_after(self.connect_timeout):
            init = await session.initialize()
            self.instructions = init.instructions
            self.tools = await _list_tools(session)
        return session

    def fail(self, message: str) -> None:
        """Mark the server unavailable, adding the tail of its stderr to the message."""
        tail = self.stderr_tail()
        self.state = "failed"
        self.message = f"{message}" + (f" (stderr: {tail})" if tail else "")
        log.info("MCP server %r %s", self.config.name, self.message)  # the notice says it

    def stderr_tail(self, limit: int = 500) -> str:
        try:
            self.errlog.flush()
            self.errlog.seek(0)
            text = self.errlog.read()
        except (OSError, ValueError):
            return ""
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return " | ".join(lines[-3:])[-limit:]


async def _list_tools(session: ClientSession) -> list[mt.Tool]:
    tools: list[mt.Tool] = []
    cursor: str | None = None
    while True:
        params = mt.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def _timed_out(exc: BaseException) -> bool:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return isinstance(exc, TimeoutError)


def _leaf(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, TimeoutError):
        return "timed out while connecting"
    if isinstance(exc, McpAuthError):
        return str(exc)
    if isinstance(exc, MCPError):
        return exc.message
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


async def _stop(servers: Sequence[_Server]) -> None:
    """Ask each server's task to end and wait for it (no leaked processes)."""
    for server in servers:
        server.stop.set()
        if not server.ready.is_set() and server.task is not None:
            server.task.cancel()  # still connecting: nothing to stop gracefully yet
    tasks = [s.task for s in servers if s.task is not None]
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)


class McpManager:
    """All MCP servers of a session. Use `async with McpManager(servers) as mcp:`."""

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        cwd: Path | None = None,
        loop: McpLoop | None = None,
        login: Interactive | None = None,
    ) -> None:
        """`cwd`: where stdio servers start unless their config names a `cwd` (the project).
        `loop`: the `McpLoop` to run the servers on (default: a new one, made by `start`).
        `login`: a person is there to log in to an OAuth server (`queryloop mcp login`);
        without it a server that wants a login fails, naming that command."""
        self.call_timeout = call_timeout
        self._connect_timeout = connect_timeout
        self._cwd = cwd
        self._login = login
        self._servers = {name: self._server(cfg) for name, cfg in servers.items()}
        """Each server's connection of the moment (`reconnect` replaces one)."""
        self._tools: dict[tuple[str, ...], list[McpTool]] = {}
        """The tools of each set of connected servers asked for (the same objects each time)."""
        self._loop = loop

    def _server(self, config: McpServerConfig) -> _Server:
        return _Server(config, self._connect_timeout, self._cwd, self._login)

    async def __aenter__(self) -> McpManager:
        try:
            await self.start()
        except BaseException:  # cancelled while connecting (Ctrl-C during a login): end all
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self, *, wait: bool = True) -> None:
        """Connect every server concurrently; returns when each is connected or has failed
        (each within `connect_timeout`), or at once with `wait=False` (`wait_ready` then
        tells when one is)."""
        await self._home().run(self._start_here(wait))

    def _home(self) -> McpLoop:
        """The loop the servers live on (made on first use unless the caller gave one), set
        up for the servers about to start there (both steps are idempotent)."""
        if self._loop is None:
            self._loop = McpLoop()
        bound_stdio_shutdown()
        # Servers started and never closed (a start-up error after this) still end at exit.
        self._loop.on_exit(self, self._close_here)
        return self._loop

    async def _start_here(self, wait: bool) -> None:
        for server in self._servers.values():
            if server.task is None:
                server.task = asyncio.create_task(server.own(), name=f"mcp:{server.config.name}")
        if wait:
            await asyncio.gather(*(s.ready.wait() for s in self._servers.values()))

    def pending(self) -> list[str]:
        """The servers still connecting, by name."""
        return [name for name, s in self._servers.items() if s.state == "pending"]

    async def wait_ready(self, name: str) -> McpServerStatus:
        """Wait until server `name` is connected or has failed; its status then (that of the
        connection made by a `reconnect` meanwhile, not the one it replaced)."""
        await self._on_loop(self._ready_here(name))
        return self.statuses()[name]

    async def _ready_here(self, name: str) -> None:
        while True:
            server = self._servers[name]
            await server.ready.wait()
            if self._servers[name] is server:
                return

    async def reconnect(self, name: str) -> McpServerStatus:
        """Close server `name`'s connection, whatever its state (connected, failed, still
        connecting), and connect it afresh with the manager's auth (the tokens a login stored
        since are read now). Returns its status once it is connected or has failed, which the
        connect timeout bounds. The other servers are left alone; this one's tools are listed
        anew. Raises KeyError for a name the manager does not have."""
        if name not in self._servers:
            raise KeyError(name)
        return await self._home().run(self._reconnect_here(name))

    async def _reconnect_here(self, name: str) -> McpServerStatus:
        old = self._servers[name]
        new = self._servers[name] = self._server(old.config)  # calls now wait for this one
        try:
            await _stop([old])
            new.task = asyncio.create_task(new.own(), name=f"mcp:{name}")
            await new.ready.wait()
        except asyncio.CancelledError:  # the caller gave up (Ctrl-C): no half-made connection
            # Said before the task ends: its end wakes the waiters, who must hear this.
            new.fail("the reconnection was interrupted")
            await _stop([old, new])
            new.ready.set()
            raise
        finally:
            old.errlog.close()
        # The tool lists cached with the old connection's tools (asked for until it was
        # replaced) must not answer for the new one.
        self._tools = {servers: t for servers, t in self._tools.items() if name not in servers}
        return McpServerStatus(name, new.state, new.message, len(new.tools))

    async def close(self) -> None:
        """Stop every server and wait for its task (no leaked processes), then the loop."""
        loop = self._loop
        if loop is not None:
            loop.done_on_exit(self)
            await loop.run(self._close_here())
            if not loop.is_home():
                loop.stop()
        for server in self._servers.values():
            server.errlog.close()

    async def _close_here(self) -> None:
        await _stop(list(self._servers.values()))

    async def _on_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` where the server sessions live."""
        if self._loop is None:  # never started: no session, so it can only say "unavailable"
            return await coro
        return await self._loop.run(coro)

    def configs(self) -> dict[str, McpServerConfig]:
        """Every server's configuration, by name."""
        return {name: server.config for name, server in self._servers.items()}

    def statuses(self) -> dict[str, McpServerStatus]:
        """Each server's state and message."""
        return {
            name: McpServerStatus(name, s.state, s.message, len(s.tools))
            for name, s in self._servers.items()
        }

    def instructions(self) -> dict[str, str]:
        """Server name → its `instructions` (connected servers that gave some)."""
        return {
            name: s.instructions
            for name, s in sorted(self._servers.items())
            if s.instructions and s.state == "connected"
        }

    def tools(self, servers: Collection[str] | None = None) -> list[McpTool]:
        """The tools the servers listed when they connected (of `servers` only, when given)
        as queryloop tools, sorted by name (stable across requests). A server still
        connecting has none yet; one that died keeps them (a call says it is unavailable)."""
        connected = tuple(
            name
            for name, server in self._servers.items()
            if server.tools and (servers is None or name in servers)
        )
        if connected not in self._tools:
            found = [
                McpTool(self, name, tool, tool_name(name, tool.name))
                for name in connected
                for tool in self._servers[name].tools
            ]
            self._tools[connected] = sorted(found, key=lambda t: t.name)
        return list(self._tools[connected])

    async def call_tool(
        self, server: str, tool: str, arguments: Mapping[str, Any], *, timeout: float | None = None
    ) -> ToolResult:
        """Call one tool; every failure is an is_error result, never an exception."""
        return await self._on_loop(self._call_tool(server, tool, arguments, timeout))

    async def _call_tool(
        self, server: str, tool: str, arguments: Mapping[str, Any], timeout: float | None
    ) -> ToolResult:
        conn = self._servers.get(server)
        session = conn.session if conn is not None and conn.state == "connected" else None
        if conn is None or session is None:
            why = conn.message if conn is not None and conn.message else "it is not connected"
            return ToolResult(f"MCP server {server!r} is unavailable: {why}", is_error=True)
        limit = self.call_timeout if timeout is None else timeout
        try:
            result = await session.call_tool(tool, dict(arguments), read_timeout_seconds=limit)
        except MCPError as exc:
            return self._call_error(conn, tool, exc, limit)
        except Exception as exc:
            return ToolResult(
                f"MCP tool {tool!r} on {server!r} failed: {_leaf(exc)}", is_error=True
            )
        return convert_call_result(result)

    def _call_error(self, conn: _Server, tool: str, exc: MCPError, limit: float) -> ToolResult:
        name = conn.config.name
        if exc.code == mt.REQUEST_TIMEOUT or "timed out" in exc.message:
            return ToolResult(
                f"MCP tool {tool!r} on {name!r} timed out after {limit:g}s", is_error=True
            )
        if exc.code == mt.CONNECTION_CLOSED:
            conn.fail("exited during the session")
            return ToolResult(f"MCP server {name!r} is unavailable: {conn.message}", is_error=True)
        return ToolResult(f"MCP tool {tool!r} on {name!r} failed: {exc.message}", is_error=True)

    async def list_resources(self, server: str | None = None) -> list[McpResource]:
        """Resources of one server (or all connected servers); failures give an empty list."""
        return await self._on_loop(self._list_resources(server))

    async def _list_resources(self, server: str | None) -> list[McpResource]:
        names = [server] if server is not None else sorted(self._servers)
        found: list[McpResource] = []
        for name in names:
            conn = self._servers.get(name)
            if conn is None or conn.session is None or conn.state != "connected":
                continue
            try:
                page = await conn.session.list_resources()
            except Exception as exc:
                log.warning("listing resources of MCP server %r failed: %s", name, _leaf(exc))
                continue
            found.extend(
                McpResource(name, str(r.uri), r.name, r.description or "", r.mime_type)
                for r in page.resources
            )
        return found

    async def read_resource(self, server: str, uri: str) -> tuple[Block, ...]:
        """A resource's contents as blocks (for an @-mention); raises McpUnavailable."""
        return await self._on_loop(self._read_resource(server, uri))

    async def _read_resource(self, server: str, uri: str) -> tuple[Block, ...]:
        conn = self._servers.get(server)
        if conn is None or conn.session is None or conn.state != "connected":
            raise McpUnavailable(f"MCP server {server!r} is unavailable")
        try:
            with anyio.fail_after(self.call_timeout):
                result = await conn.session.read_resource(uri)
        except Exception as exc:
            raise McpUnavailable(
                f"reading {uri} from MCP server {server!r} failed: {_leaf(exc)}"
            ) from exc
        return tuple(convert_resource_contents(result.contents))


class McpUnavailable(Exception):
    """A resource could not be read (server missing, dead or erroring); message says which."""


def describe_statuses(statuses: Sequence[McpServerStatus]) -> list[str]:
    """One line per server that is not connected (for a startup notice)."""
    return [
        f"MCP server {s.name!r} {s.message or s.state}" for s in statuses if s.state != "connected"
    ]
