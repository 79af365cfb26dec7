"""Start MCP servers at once, in a thread of their own, while the rest of start-up goes on.

A stdio server is a process that needs a second or more to start (a Python server imports
the `mcp` SDK too); the `mcp` client SDK costs ours about half a second of imports. Started
in line, after the model SDK was imported, a server added all of that to the time before the
first request. `launch_mcp()` returns at once: a daemon thread with its own event loop
(`McpLoop`) imports the client, spawns every server and runs their handshakes while the main
thread imports the model SDK, reads settings and runs git. `McpLaunch.manager()` then waits
only for what is left. The servers live on that loop for the whole session: `McpManager`
sends each call there, so nothing the main thread does (a synchronous import, a subprocess)
can stall a server's pipes.

This module imports nothing of the `mcp` SDK itself: that import is the thread's work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from .mcp_loop import McpLoop
from .mcp_server import McpServerConfig

if TYPE_CHECKING:
    from .mcp import McpManager

IMPORT_ATTEMPTS = 3


class McpLaunch:
    """Servers being started by `launch_mcp`; `await manager()` for the running manager."""

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        cwd: Path | None,
        connect_timeout: float | None = None,
        wait: bool = True,
        call_timeout: float | None = None,
    ) -> None:
        self.loop = McpLoop()
        self._boot_task: asyncio.Task[McpManager] | None = None
        self._manager: McpManager | None = None
        # Until the manager is handed over, ending the servers at exit is this launch's job.
        self.loop.on_exit(self, self._end)
        self._started = self.loop.submit(
            self._boot(dict(servers), cwd, connect_timeout, wait, call_timeout)
        )

    async def _boot(
        self,
        servers: dict[str, McpServerConfig],
        cwd: Path | None,
        connect_timeout: float | None,
        wait: bool,
        call_timeout: float | None,
    ) -> McpManager:
        self._boot_task = cast("asyncio.Task[McpManager]", asyncio.current_task())
        manager_class = _import_manager()
        # Unset, the manager's own defaults hold (MCP_TIMEOUT's 30 s, the call limit).
        timeouts: dict[str, Any] = {
            name: value
            for name, value in (
                ("connect_timeout", connect_timeout),
                ("call_timeout", call_timeout),
            )
            if value is not None
        }
        manager = self._manager = manager_class(servers, cwd=cwd, loop=self.loop, **timeouts)
        await manager.start(wait=wait)
        return manager

    async def _end(self) -> None:
        """At exit, before the manager was handed over: stop starting, end what started."""
        if self._boot_task is not None and not self._boot_task.done():
            self._boot_task.cancel()
            await asyncio.gather(self._boot_task, return_exceptions=True)
        if self._manager is not None:
            await self._manager.close()

    def done(self) -> bool:
        """Whether every server is connected or has failed (or the start itself failed)."""
        return self._started.done()

    async def manager(self) -> McpManager:
        """The manager once every server is connected or has failed (as `McpManager.start`),
        or, launched with `wait=False`, as soon as the servers are starting."""
        manager = await asyncio.wrap_future(self._started)
        self.loop.done_on_exit(self)  # the manager's own exit work covers it from here
        return manager


def launch_mcp(
    servers: Mapping[str, McpServerConfig],
    *,
    cwd: Path | None = None,
    connect_timeout: float | None = None,
    call_timeout: float | None = None,
    wait: bool = True,
) -> McpLaunch:
    """Start connecting `servers` in the background now; see the module doc.
    `connect_timeout`, `call_timeout`: seconds a handshake and a tool call may take (None:
    the manager's defaults). `wait=False`: `manager()` does not wait for the servers."""
    return McpLaunch(servers, cwd, connect_timeout, wait, call_timeout)


def _import_manager() -> type[McpManager]:
    """Import the client side on this thread. The model SDK may be importing on another
    thread at the same moment; when both need the same half-imported module (httpx, anyio,
    pydantic's insides), importlib breaks the cycle by raising a deadlock error in one of
    them: then the import is simply tried again (the other thread has finished by then)."""
    for attempt in range(IMPORT_ATTEMPTS):
        try:
            from .mcp import McpManager

            return McpManager
        except RuntimeError as exc:  # importlib's _DeadlockError
            if "deadlock" not in str(exc) or attempt == IMPORT_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")
