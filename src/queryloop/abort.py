"""A cooperative abort signal shared by the loop, providers and tools."""

from __future__ import annotations

import asyncio


class AbortSignal:
    """Set once to ask every running part of a turn to stop as soon as it safely can.

    Reusable across turns via `reset()`; the REPL sets it on Ctrl-C.
    """

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.reason: str | None = None

    @property
    def aborted(self) -> bool:
        """True once `abort()` was called (and not reset since)."""
        return self._event.is_set()

    def abort(self, reason: str = "user") -> None:
        """Request the abort. Idempotent; the first reason is kept."""
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    def reset(self) -> None:
        """Clear the signal for the next turn."""
        self._event = asyncio.Event()
        self.reason = None

    async def wait(self) -> None:
        """Wait until aborted."""
        await self._event.wait()
