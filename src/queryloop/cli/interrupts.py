"""Ctrl-C for the REPL: one SIGINT handler on the event loop, and scopes that say what it does.

Why one router instead of `loop.add_signal_handler` wherever Ctrl-C matters: whoever removes a
SIGINT handler also removes everybody else's. prompt_toolkit saves and restores the process's
SIGINT disposition around every prompt, and asyncio's `remove_signal_handler` resets it to the
default; either silently dropped the turn's handler after a permission prompt, so Ctrl-C was
ignored for the rest of the turn (issue 13). Here the router owns the loop's handler for the
REPL's lifetime; code that needs Ctrl-C pushes a scope (`with router.scope(fn):`), and after
any foreign code that may have touched signals (a prompt) the REPL calls `reassert()`.

`Interruptible` runs one piece of work (a turn, /compact) under a scope: the first Ctrl-C
asks it to stop cooperatively (`agent.abort()`), and if it has not ended within
`HARD_CANCEL_S` — a summary request that ignores the abort, a hook that does not return — the
task is cancelled (the Agent answers any open tool call on cancel, so the array stays valid).
A second Ctrl-C cancels at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

HARD_CANCEL_S = 0.5
"""After the first Ctrl-C, how long cooperative stopping may take before the task is cancelled
(the REPL promises to be back at its prompt within a second)."""


class SigintRouter:
    """Routes SIGINT to the innermost active scope; ignored when no scope is active."""

    def __init__(self) -> None:
        self._stack: list[Callable[[], None]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def install(self) -> bool:
        """Own the running loop's SIGINT handler (again). False where signals are unsupported
        (not the main thread, or Windows): Ctrl-C then raises KeyboardInterrupt as usual."""
        try:
            loop = asyncio.get_running_loop()
            loop.add_signal_handler(signal.SIGINT, self._dispatch)
        except (NotImplementedError, RuntimeError, ValueError):
            return False
        self._loop = loop
        return True

    def reassert(self) -> None:
        """Reinstall the handler after code that may have replaced it (prompt_toolkit)."""
        if self._loop is not None:
            self.install()

    def uninstall(self) -> None:
        """Give SIGINT back (at the end of the REPL)."""
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_signal_handler(signal.SIGINT)
            self._loop = None

    @contextlib.contextmanager
    def scope(self, handler: Callable[[], None]) -> Iterator[None]:
        """While inside, Ctrl-C calls `handler` (inner scopes win)."""
        self._stack.append(handler)
        try:
            yield
        finally:
            self._stack.remove(handler)

    @property
    def active(self) -> bool:
        """True when the handler is installed on a loop."""
        return self._loop is not None

    def _dispatch(self) -> None:
        if self._stack:
            self._stack[-1]()


class Interruptible:
    """Runs one coroutine so that Ctrl-C stops it: softly first, then for sure."""

    def __init__(
        self,
        router: SigintRouter,
        *,
        soft_stop: Callable[[], None] | None = None,
        hard_cancel_s: float = HARD_CANCEL_S,
    ) -> None:
        self.router = router
        self.soft_stop = soft_stop
        self.hard_cancel_s = hard_cancel_s
        self.interrupted = False
        """True once Ctrl-C was pressed during the work."""
        self.cancelled = False
        """True when the work had to be cancelled (it did not stop by itself in time)."""
        self._task: asyncio.Task[Any] | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def run(self, work: Coroutine[Any, Any, Any]) -> Any:
        """Await `work` and return its result; None when an interrupt had to cancel it
        (`cancelled` is then True). Cancelling the caller cancels the work too."""
        task = self._task = asyncio.ensure_future(work)
        try:
            with self.router.scope(self.interrupt):
                return await task
        except asyncio.CancelledError:
            if task.cancelled() and self.interrupted:
                self.cancelled = True
                return None
            raise
        finally:
            if self._timer is not None:
                self._timer.cancel()
            self._task = None

    def interrupt(self) -> None:
        """Ctrl-C: the first asks the work to stop and arms the hard cancel; a second cancels."""
        task = self._task
        if task is None or task.done():
            return
        if self.interrupted:
            task.cancel()
            return
        self.interrupted = True
        if self.soft_stop is not None:
            self.soft_stop()
        self._timer = asyncio.get_running_loop().call_later(self.hard_cancel_s, task.cancel)
