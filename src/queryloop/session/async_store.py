"""Async session stores (the Claude Agent SDK's shape) behind queryloop's synchronous protocol.

The SDK's `SessionStore` protocol is async (`async def append(...)`); queryloop's
(`store_api`) is synchronous, because the loop makes each record durable before it takes its
next step. `SyncStoreAdapter` runs each coroutine on one background event-loop thread shared
by every adapter of the process and waits for it. The caller's own event loop is blocked
meanwhile (the record must be stored before the loop goes on), so the coroutine cannot run
there; a store whose client is bound to the event loop it was made in (an asyncpg pool, an
aiohttp session) must therefore create that client inside its coroutines, on first use, so
that it belongs to the adapter's loop.

As in the SDK, only `append` and `load` are required: a missing (or `NotImplementedError`)
`list_sessions`, `delete` or `list_subkeys` fails when it is called, with a `SessionError`
naming it. `list_sessions` results are sorted newest first and subkeys sorted, as ours are.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Coroutine, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from .store import SessionError
from .store_api import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStore,
    SessionStoreEntry,
    SessionStoreListEntry,
)

T = TypeVar("T")


class SyncStoreAdapter:
    """An SDK-shaped async store behind queryloop's synchronous protocol (see the module
    docstring: its coroutines run on a shared background event loop)."""

    def __init__(self, inner: Any, *, timeout: float | None = None) -> None:
        self.inner = inner
        self.timeout = timeout
        """Seconds to wait for one call (None: as long as it takes)."""

    def append(self, key: SessionKey, entries: Sequence[SessionStoreEntry]) -> None:
        """The store's `append`, waited for: durable when it returns."""
        if entries:
            self._call("append", key, list(entries))

    def load(self, key: SessionKey) -> list[SessionStoreEntry] | None:
        """The store's `load`."""
        loaded: list[SessionStoreEntry] | None = self._call("load", key)
        return loaded

    def list_sessions(self, project_key: str) -> list[SessionStoreListEntry]:
        """The store's `list_sessions`, newest first."""
        listed: list[SessionStoreListEntry] = self._call("list_sessions", project_key)
        return sorted(listed, key=lambda e: e["mtime"], reverse=True)

    def delete(self, key: SessionKey) -> None:
        """The store's `delete`."""
        self._call("delete", key)

    def list_subkeys(self, key: SessionListSubkeysKey) -> list[str]:
        """The store's `list_subkeys`, sorted."""
        return sorted(self._call("list_subkeys", key))

    def _call(self, name: str, *args: Any) -> Any:
        method = getattr(self.inner, name, None)
        if method is None:
            raise SessionError(f"the session store {type(self.inner).__name__} has no {name}()")
        try:
            result = method(*args)
            if inspect.isawaitable(result):
                result = _run(_awaited(result), self.timeout)
        except NotImplementedError:
            raise SessionError(
                f"the session store {type(self.inner).__name__} does not implement {name}()"
            ) from None
        return result


def as_session_store(value: object) -> SessionStore:
    """queryloop's synchronous store for a `session_store` value: one of ours (or anything
    with synchronous methods) as it is, an async one behind a `SyncStoreAdapter`; a
    `TypeError` for something that is not a store."""
    sync = getattr(value, "sync_store", None)  # the SDK-named in-memory store: its own
    if isinstance(sync, SessionStore):
        return sync
    append = getattr(value, "append", None)
    if append is None or not callable(getattr(value, "load", None)):
        raise TypeError(f"session_store: {type(value).__name__} has no append() and load()")
    if inspect.iscoroutinefunction(append):
        return SyncStoreAdapter(value)
    if isinstance(value, SessionStore):
        return value
    return SyncStoreAdapter(value)  # sync methods, some missing: the adapter names them


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


class _LoopThread:
    """One event loop on a daemon thread, started on first use."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="queryloop-session-store", daemon=True
                )
                thread.start()
                self._loop = loop
            return self._loop


_LOOP = _LoopThread()


def _run(coroutine: Coroutine[Any, Any, T], timeout: float | None) -> T:
    loop = _LOOP.loop()
    if _on_loop_thread(loop):
        coroutine.close()
        raise SessionError("a session store's coroutine cannot wait for itself")
    future: Future[T] = asyncio.run_coroutine_threadsafe(coroutine, loop)
    return future.result(timeout)


def _on_loop_thread(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
