"""`McpLoop`: an asyncio event loop in a daemon thread of its own, home of the MCP servers'
tasks for a whole session (`tools.mcp.McpManager` sends each call there; `tools.mcp_launch`
starts the servers on it while the rest of start-up goes on)."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

EXIT_CLOSE_TIMEOUT = 3.0
"""At interpreter exit, how long servers nobody closed get to shut down (each step of the
stdio shutdown is bounded well below this)."""


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
