"""Bounded retries with exponential backoff and jitter, honouring the server's retry-after.

Only errors marked `retryable` (overloaded, rate limited, 5xx, connection, timeout) are retried,
and only while the failed attempt had not yielded any event yet: a stream that already gave the
caller content is never replayed behind its back. Prompt-too-long and invalid requests are never
retried. The abort signal interrupts a backoff wait at once.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import sys
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, TypeVar

from ..abort import AbortSignal
from .base import ProviderEvent, RetryWait, StreamEvent
from .errors import ProviderError, StreamAbortedError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to wait before resending a failed request.

    The n-th retry (n from 0) waits `min(max_delay, base_delay * 2**n)` plus up to `jitter`
    times that at random, or exactly what the server's retry-after asked for. A retry-after
    longer than `max_retry_after` is not waited for: the error is raised instead.
    """

    max_retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 32.0
    jitter: float = 0.25
    max_retry_after: float = 120.0

    def should_retry(self, error: ProviderError, retries_done: int) -> bool:
        """Whether `error` may be retried after `retries_done` retries."""
        if not error.retryable or retries_done >= self.max_retries:
            return False
        after = getattr(error, "retry_after", None)
        return after is None or after <= self.max_retry_after

    def delay_for(
        self, error: ProviderError, retries_done: int, rand: Callable[[], float] = random.random
    ) -> float:
        """Seconds to wait before the next attempt."""
        after: float | None = getattr(error, "retry_after", None)
        if after is not None:
            return max(0.0, after)
        backoff = min(self.max_delay, self.base_delay * (2.0**retries_done))
        return backoff * (1.0 + self.jitter * rand())


DEFAULT_RETRY = RetryPolicy()
NO_RETRY = RetryPolicy(max_retries=0)


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


async def wait_or_abort(seconds: float, abort: AbortSignal | None) -> None:
    """Sleep `seconds`; raise `StreamAbortedError` at once if `abort` fires meanwhile."""
    if abort is None:
        await asyncio.sleep(seconds)
        return
    if abort.aborted:
        raise StreamAbortedError(f"aborted ({abort.reason})")
    try:
        await asyncio.wait_for(abort.wait(), timeout=seconds)
    except TimeoutError:
        return
    raise StreamAbortedError(f"aborted during retry backoff ({abort.reason})")


async def retrying_stream(
    attempt: Callable[[], AsyncGenerator[StreamEvent, None]],
    policy: RetryPolicy,
    abort: AbortSignal | None = None,
) -> AsyncIterator[ProviderEvent]:
    """Run `attempt()` and stream its events, retrying per `policy` before the first event;
    a `RetryWait` says so before each wait."""
    retries = 0
    while True:
        yielded = False
        try:
            async with aclosing(attempt()) as events:
                async for event in events:
                    yielded = True
                    yield event
            return
        except ProviderError as error:
            if yielded or isinstance(error, StreamAbortedError):
                raise
            if not policy.should_retry(error, retries):
                raise
            delay = policy.delay_for(error, retries)
            retries += 1
            _note_retry(error, retries, delay)
            yield RetryWait(retries, policy.max_retries, delay, error)
            await wait_or_abort(delay, abort)


RETRY_EVENT = "queryloop.request.retry"
"""The span event of a retry (`queryloop.telemetry.semconv.EVENT_RETRY`)."""


def _note_retry(error: ProviderError, retry: int, delay: float) -> None:
    """Add a retry event to the current span: the request's `chat` span when the session
    traces (`queryloop.telemetry`), else OpenTelemetry's no-op span. The API is reached
    through `sys.modules` so that a process that never loaded it does not load it here."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return
    attributes = {
        "retry": retry,
        "delay_s": round(delay, 3),
        "error.type": type(error).__name__,
    }
    trace.get_current_span().add_event(RETRY_EVENT, attributes)


async def race_abort(
    awaitable: Awaitable[T],
    abort: AbortSignal | None,
    on_abort: Callable[[], ProviderError],
) -> T:
    """Await `awaitable` unless `abort` fires first: then cancel it and raise `on_abort()`."""
    if abort is None:
        return await awaitable
    if abort.aborted:
        close = getattr(awaitable, "close", None)
        if callable(close):
            close()  # a never-awaited coroutine would warn
        raise on_abort()
    task: asyncio.Future[T] = asyncio.ensure_future(awaitable)
    waiter: asyncio.Future[Any] = asyncio.ensure_future(abort.wait())
    pending: set[asyncio.Future[Any]] = {task, waiter}
    try:
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if task.done():
        return task.result()
    task.cancel()
    try:
        await task
    except (asyncio.CancelledError, Exception):
        pass
    raise on_abort()


def aborted_error(abort: AbortSignal, interrupted: Any) -> StreamAbortedError:
    """A `StreamAbortedError` carrying what an interrupted-stream error would carry."""
    return StreamAbortedError(
        f"aborted ({abort.reason}): {interrupted}",
        completed_blocks=getattr(interrupted, "completed_blocks", ()),
        message_id=getattr(interrupted, "message_id", None),
        usage=getattr(interrupted, "usage", None),
    )
