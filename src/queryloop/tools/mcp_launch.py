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
import atexit
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .mcp_server import McpServerConfig

if TYPE_CHECKING:
    from .mcp import McpManager

T = TypeVar("T")

EXIT_CLOSE_TIMEOUT = 3.0
"""At interpreter exit, how long servers nobody closed get to shut down (each step of the
stdio shutdown is bounded well below this)."""

IMPORT_ATTEMPTS = 3


class McpLoop:
    """An asyncio event loop running in a daemon thread, home of MCP server tasks.

    `run()` awaits a coroutine on it from any other loop (cancelling the caller cancels the
    coroutine); `submit()` starts one from any thread. Work registered with `on_exit()` and
    not withdrawn runs at interpreter exit, so a server is terminated even when a start-up
    error skipped the session's normal close."""

    def __init__(self, name: str = "queryloop-mcp") -> None:
        self.loop = asyncio.new_event_loop()
        self._exit_work: dict[int, Callable[[], Coroutine[Any, Any, None]]] = {}
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()
        atexit.register(self._at_exit)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            # Whatever is left (only after an exit that skipped the close) is cancelled, so a
            # half-connected server's transport still terminates its process.
            left = asyncio.all_tasks(self.loop)
            for task in left:
                task.cancel()
            if left:
                self.loop.run_until_complete(asyncio.wait(left, timeout=EXIT_CLOSE_TIMEOUT))
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def is_home(self) -> bool:
        """Whether the caller runs on this loop."""
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start `coro` on this loop (from any thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await `coro` on this loop from the caller's loop (directly when already home)."""
        if self.is_home():
            return await coro
        return await asyncio.wrap_future(self.submit(coro))

    def on_exit(self, key: object, work: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Run `work` on this loop at interpreter exit unless `done_on_exit(key)` came first."""
        self._exit_work[id(key)] = work

    def done_on_exit(self, key: object) -> None:
        """Withdraw the exit work registered for `key`."""
        self._exit_work.pop(id(key), None)

    def stop(self) -> None:
        """Stop the loop and its thread (after its work is done)."""
        atexit.unregister(self._at_exit)
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            if threading.current_thread() is not self._thread:
                self._thread.join(timeout=EXIT_CLOSE_TIMEOUT)

    def _at_exit(self) -> None:
        work = list(self._exit_work.values())
        self._exit_work.clear()
        if work and self._thread.is_alive():

            async def all_of() -> None:
                await asyncio.gather(*(w() for w in work), return_exceptions=True)

            try:
                self.submit(all_of()).result(timeout=EXIT_CLOSE_TIMEOUT)
            except Exception:  # at exit there is no one left to tell
                pass
        self.stop()


class McpLaunch:
    """Servers being started by `launch_mcp`; `await manager()` for the running manager."""

    def __init__(self, servers: Mapping[str, McpServerConfig], cwd: Path | None) -> None:
        self.loop = McpLoop()
        self._boot_task: asyncio.Task[McpManager] | None = None
        self._manager: McpManager | None = None
        # Until the manager is handed over, ending the servers at exit is this launch's job.
        self.loop.on_exit(self, self._end)
        self._started = self.loop.submit(self._boot(dict(servers), cwd))

    async def _boot(self, servers: dict[str, McpServerConfig], cwd: Path | None) -> McpManager:
        self._boot_task = cast("asyncio.Task[McpManager]", asyncio.current_task())
        manager_class = _import_manager()
        manager = self._manager = manager_class(servers, cwd=cwd, loop=self.loop)
        await manager.start()
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
        """The manager once every server is connected or has failed (as `McpManager.start`)."""
        manager = await asyncio.wrap_future(self._started)
        self.loop.done_on_exit(self)  # the manager's own exit work covers it from here
        return manager


def launch_mcp(servers: Mapping[str, McpServerConfig], *, cwd: Path | None = None) -> McpLaunch:
    """Start connecting `servers` in the background now; see the module doc."""
    return McpLaunch(servers, cwd)


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
