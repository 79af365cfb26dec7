"""`ScriptedProvider`: an in-process `ModelProvider` for fast unit tests (no HTTP).

It lives with the test server, not in `queryloop.providers`: it renders turns with the
server's code, and production packages never import `queryloop.testing`.

    provider = ScriptedProvider([
        turn(tool_use("Read", {"file_path": "a.py"})),
        OverloadedError("Overloaded", status=529),   # an entry may be an error to raise
        turn(text("Done.")),
    ])
    ... run the code under test ...
    provider.assert_complete()
    assert provider.requests[0].model == "claude-sonnet-5-5"

Turns are rendered exactly as `MessagesServer` renders them (same SSE event
sequence, same awkward tool-input chunks, same max_tokens truncation) and go through the same
`StreamAssembler` as the Anthropic provider, so canonical events match the real provider's.
Use the HTTP server when the provider itself, retries or the cache are under test.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any, TypeAlias

from ..abort import AbortSignal
from ..providers.assembler import StreamAssembler
from ..providers.base import ModelRequest, StreamEvent
from ..providers.errors import StreamAbortedError
from . import events as ev
from .script import ScriptExhaustedError, Turn, new_id, turn
from .tokens import count_input_tokens

Step: TypeAlias = "Turn | str | BaseException"
StepSource: TypeAlias = "Iterable[Step] | Callable[[ModelRequest], Step]"


class ScriptedProvider:
    """A `ModelProvider` that answers from a script of turns (or errors), in process.

    Args:
        script: a list of `Turn`s, strings (text turns) or exceptions to raise; or a callable
            `(ModelRequest) -> Turn | str | BaseException`.
        event_delay: seconds to sleep between events (to test streaming behaviour).
    """

    name = "scripted"

    def __init__(self, script: StepSource, *, event_delay: float = 0.0) -> None:
        self._fn: Callable[[ModelRequest], Step] | None = None
        self._steps: list[Step] = []
        if callable(script):
            self._fn = script
        else:
            self._steps = list(script)
        self.event_delay = event_delay
        self.requests: list[ModelRequest] = []

    @property
    def remaining(self) -> int:
        """Scripted steps not yet used (0 for a callable script)."""
        return 0 if self._fn is not None else max(0, len(self._steps) - len(self.requests))

    def assert_complete(self) -> None:
        """Fail unless every scripted step was used."""
        if self.remaining:
            raise AssertionError(f"{self.remaining} scripted step(s) were never requested")

    def _next_step(self, request: ModelRequest) -> Step:
        index = len(self.requests)
        self.requests.append(request)
        if self._fn is not None:
            return self._fn(request)
        if index >= len(self._steps):
            raise ScriptExhaustedError(
                f"unexpected model call #{index + 1} (model {request.model!r}): the script has "
                f"only {len(self._steps)} step(s)"
            )
        return self._steps[index]

    def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Answer `request` with the next scripted step."""
        return self._stream(request, abort)

    async def _stream(
        self, request: ModelRequest, abort: AbortSignal | None
    ) -> AsyncIterator[StreamEvent]:
        step = self._next_step(request)
        if isinstance(step, BaseException):
            raise step
        scripted = turn(step) if isinstance(step, str) else step
        assembler = StreamAssembler()
        for raw in _raw_events(scripted, request):
            if abort is not None and abort.aborted:
                interrupted = assembler.interrupted(f"aborted ({abort.reason})")
                raise StreamAbortedError(
                    str(interrupted),
                    completed_blocks=interrupted.completed_blocks,
                    message_id=interrupted.message_id,
                    usage=interrupted.usage,
                )
            for event in assembler.feed(raw):
                yield event
            if self.event_delay:
                await asyncio.sleep(self.event_delay)


def _raw_events(scripted: Turn, request: ModelRequest) -> list[dict[str, Any]]:
    rendered = ev.render_turn(scripted, request.max_tokens)
    usage = {"input_tokens": count_input_tokens(request.to_body())}
    raw = [ev.message_start(new_id("msg"), request.model, usage)]
    for index, block in enumerate(rendered.blocks):
        raw.extend(ev.block_events(index, block))
    raw.extend(ev.message_end(rendered, usage))
    return raw
