"""The one stream driver both SDK-backed providers run on.

A provider supplies three things: how to open its SDK stream (`open_stream`), a fresh pure
assembler per attempt (raw SDK chunks in, canonical events out) and how to map its SDK's
exceptions (`map_error`). The driver owns everything else, once:

- hold-back: events that are only `MessageStart` are held until something else arrives, so an
  error right after the stream opened (the API reports an overload that way) is still a clean,
  retryable error and not an interrupted stream;
- retry: `retrying_stream` resends per `RetryPolicy`, only while nothing was yielded yet;
- mid-stream errors: before the first yielded event they are the typed, retryable error; after
  it a `StreamInterruptedError` carrying the completed blocks, with the typed error as cause;
- a stream that ends before any content is a `ProviderConnectionError` (retryable); one that
  ends after content but before the message's end is the assembler's interrupted error;
- abort: opening and every read race the abort signal; an abort raises `StreamAbortedError`
  with what had completed, and the SDK stream is always closed.

This module imports no SDK: the OpenAI-compatible provider does not load `anthropic`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Protocol

from ..abort import AbortSignal
from .base import MessageStart, ProviderEvent, StreamEvent
from .errors import ProviderConnectionError, ProviderError, StreamInterruptedError
from .retry import RetryPolicy, aborted_error, race_abort, retrying_stream


class RawChunk(Protocol):
    """One item of an SDK stream (both SDKs yield pydantic models with `to_dict()`)."""

    def to_dict(self) -> Mapping[str, Any]:
        """The chunk as the wire JSON object."""
        ...


class RawStream(Protocol):
    """An open SDK stream: async-iterable chunks and an async `close()`."""

    def __aiter__(self) -> AsyncIterator[Any]:
        """Iterate the raw chunks."""
        ...

    async def close(self) -> None:
        """Release the HTTP response."""
        ...


class ChunkAssembler(Protocol):
    """A pure per-attempt assembler: no I/O, fed one decoded chunk at a time."""

    def feed(self, raw: Mapping[str, Any]) -> list[StreamEvent]:
        """The canonical events `raw` produced (may raise `StreamInterruptedError`)."""
        ...

    def end(self) -> list[StreamEvent]:
        """Events that close the message once the stream ended; raises the interrupted error
        if the message did not end properly."""
        ...

    @property
    def ended(self) -> bool:
        """True once the message's end arrived (message_stop, a finish_reason)."""
        ...

    def interrupted(self, reason: str) -> StreamInterruptedError:
        """A `StreamInterruptedError` carrying what completed so far."""
        ...


def drive_stream(
    open_stream: Callable[[], Awaitable[RawStream]],
    new_assembler: Callable[[], ChunkAssembler],
    map_error: Callable[[BaseException], ProviderError],
    policy: RetryPolicy,
    abort: AbortSignal | None = None,
) -> AsyncIterator[ProviderEvent]:
    """Stream canonical events from a provider's SDK stream, with retries (see module doc).

    `open_stream` must already raise typed `ProviderError`s for failures to open.
    """

    def attempt() -> AsyncGenerator[StreamEvent, None]:
        return _attempt(open_stream, new_assembler(), map_error, abort)

    return retrying_stream(attempt, policy, abort)


async def _attempt(
    open_stream: Callable[[], Awaitable[RawStream]],
    assembler: ChunkAssembler,
    map_error: Callable[[BaseException], ProviderError],
    abort: AbortSignal | None,
) -> AsyncGenerator[StreamEvent, None]:
    on_abort = _on_abort(abort, assembler)
    sdk_stream = await race_abort(open_stream(), abort, on_abort)
    hold = _HoldBack()
    try:
        iterator = sdk_stream.__aiter__()
        while True:
            try:
                raw = await race_abort(iterator.__anext__(), abort, on_abort)
            except StopAsyncIteration:
                break
            except ProviderError:
                raise
            except Exception as exc:
                error = _mid_stream_error(map_error(exc), exc, assembler, hold.released)
                raise error from (error.__cause__ or exc)
            for event in hold.push(assembler.feed(raw.to_dict())):
                yield event
    finally:
        await sdk_stream.close()
    if not hold.released and not assembler.ended:
        raise ProviderConnectionError("the stream ended before any content arrived")
    for event in hold.flush(assembler.end()):
        yield event


class _HoldBack:
    """Holds events while they are only `MessageStart`s; releases them with the next others."""

    def __init__(self) -> None:
        self.released = False
        self._held: list[StreamEvent] = []

    def push(self, events: list[StreamEvent]) -> list[StreamEvent]:
        """What may be yielded now."""
        if not self.released and all(isinstance(e, MessageStart) for e in events):
            self._held.extend(events)
            return []
        return self.flush(events)

    def flush(self, events: list[StreamEvent]) -> list[StreamEvent]:
        """Everything held plus `events`."""
        out, self._held = [*self._held, *events], []
        self.released = self.released or bool(out)
        return out


def _mid_stream_error(
    typed: ProviderError, exc: Exception, assembler: ChunkAssembler, yielded: bool
) -> ProviderError:
    """Typed and retryable before any event was yielded; otherwise a `StreamInterruptedError`
    carrying the completed blocks, the typed error as its cause."""
    if not yielded:
        return typed
    interrupted = assembler.interrupted(f"the stream broke: {typed}")
    typed.__cause__ = exc
    interrupted.__cause__ = typed
    return interrupted


def _on_abort(abort: AbortSignal | None, assembler: ChunkAssembler) -> Callable[[], ProviderError]:
    def make() -> ProviderError:
        signal = abort or AbortSignal()
        return aborted_error(signal, assembler.interrupted(f"aborted ({signal.reason})"))

    return make
