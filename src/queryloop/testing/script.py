"""Scripted model turns: what the fake model says, built with small helpers.

    turn(text("Reading it."), tool_use("Read", {"file_path": "a.py"}))
    turn(thinking("Let me think", signature="sig"), text("Done."), stop_reason="end_turn")

A `ScriptedModel` hands out turns in order, or asks a callable `(request_body) -> Turn`.
"""

from __future__ import annotations

import hashlib
import itertools
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from .server_tools import ServerPart

_ids = itertools.count(1)
_ids_lock = threading.Lock()


def new_id(prefix: str) -> str:
    """A unique, deterministic-looking id such as `toolu_01QLTEST000000000000007`."""
    with _ids_lock:
        n = next(_ids)
    return f"{prefix}_01QLTEST{n:016d}"


@dataclass(frozen=True, slots=True)
class TextPart:
    """Text the model says."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolUsePart:
    """A tool call; `id` is generated (`toolu_...`) when not given."""

    name: str
    input: Mapping[str, Any]
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ThinkingPart:
    """Extended thinking with its signature."""

    thinking: str
    signature: str


@dataclass(frozen=True, slots=True)
class RedactedThinkingPart:
    """Redacted (encrypted) thinking."""

    data: str


Part: TypeAlias = TextPart | ToolUsePart | ThinkingPart | RedactedThinkingPart | ServerPart


@dataclass(frozen=True, slots=True)
class Turn:
    """One model response. `stop_reason` None means: tool_use if it calls tools, else end_turn."""

    parts: tuple[Part, ...]
    stop_reason: str | None = None
    stop_sequence: str | None = None

    @property
    def effective_stop_reason(self) -> str:
        """The stop reason the server reports when the turn is not truncated."""
        if self.stop_reason is not None:
            return self.stop_reason
        if any(isinstance(p, ToolUsePart) for p in self.parts):
            return "tool_use"
        return "end_turn"


def text(value: str) -> TextPart:
    """A text part."""
    return TextPart(value)


def tool_use(
    name: str, input: Mapping[str, Any] | None = None, *, id: str | None = None
) -> ToolUsePart:
    """A tool_use part; its input JSON is streamed in awkward chunks."""
    return ToolUsePart(name=name, input=dict(input or {}), id=id)


OUTPUT_TOOL = "StructuredOutput"
"""The tool an Agent with an `output_type` offers (Claude Code's name; production declares it
in `queryloop.tools.structured_output`, which this layer sits below: a test checks the two)."""


def structured_output(value: Mapping[str, Any], *, id: str | None = None) -> ToolUsePart:
    """The model returning `value` as the prompt's structured output: a call of the
    `StructuredOutput` tool with `value` as its input."""
    return ToolUsePart(name=OUTPUT_TOOL, input=dict(value), id=id)


def thinking(value: str, *, signature: str | None = None) -> ThinkingPart:
    """A thinking part; a signature is made up when not given."""
    made_up = "sig_" + hashlib.sha256(value.encode()).hexdigest()[:24]
    return ThinkingPart(thinking=value, signature=signature or made_up)


def redacted_thinking(data: str = "EncryptedThinkingData==") -> RedactedThinkingPart:
    """A redacted_thinking part."""
    return RedactedThinkingPart(data)


def turn(
    *parts: Part | str, stop_reason: str | None = None, stop_sequence: str | None = None
) -> Turn:
    """A turn from parts; a bare string is a text part."""
    built = tuple(TextPart(p) if isinstance(p, str) else p for p in parts)
    return Turn(parts=built, stop_reason=stop_reason, stop_sequence=stop_sequence)


TurnSource: TypeAlias = "Iterable[Turn | str] | Callable[[dict[str, Any]], Turn | str]"


class ScriptExhaustedError(AssertionError):
    """The code under test made more model calls than the script has turns."""


class ScriptedModel:
    """A model that answers from a script: a list of turns, or a function of the request body.

    Thread-safe: the HTTP server calls it from handler threads. `calls` counts answered requests.
    """

    def __init__(self, script: TurnSource) -> None:
        self._lock = threading.Lock()
        self._fn: Callable[[dict[str, Any]], Turn | str] | None = None
        self._turns: list[Turn] = []
        if callable(script):
            self._fn = script
        else:
            self._turns = [turn(t) if isinstance(t, str) else t for t in script]
        self.calls = 0

    @property
    def remaining(self) -> int:
        """Turns not yet used (0 for a callable script)."""
        with self._lock:
            return max(0, len(self._turns) - self.calls) if self._fn is None else 0

    def next_turn(self, body: dict[str, Any]) -> Turn:
        """The turn that answers `body`; raises `ScriptExhaustedError` past the end."""
        with self._lock:
            index = self.calls
            self.calls += 1
            fn = self._fn
            if fn is None and index >= len(self._turns):
                raise ScriptExhaustedError(
                    f"unexpected model call #{index + 1}: the script has only "
                    f"{len(self._turns)} turn(s)"
                )
        if fn is not None:
            result = fn(body)
            return turn(result) if isinstance(result, str) else result
        return self._turns[index]

    def assert_complete(self) -> None:
        """Fail unless every scripted turn was used."""
        left = self.remaining
        if left:
            raise AssertionError(f"{left} scripted turn(s) were never requested")


def as_model(model: ScriptedModel | TurnSource | None) -> ScriptedModel:
    """Accept a `ScriptedModel`, a list of turns or a callable."""
    if model is None:
        return ScriptedModel([])
    if isinstance(model, ScriptedModel):
        return model
    return ScriptedModel(model)


@dataclass(frozen=True, slots=True)
class Fault:
    """A failure the server injects instead of (or into) its next response.

    kind:
    - "http": answer with `status` and an API error body (`error_type`, `message`), no turn used.
    - "stream_error": stream the turn, then send an SSE `error` event after `after_blocks`
      complete blocks (the way the real API reports an overload during streaming).
    - "cut": stream the turn and drop the connection right after block `after_blocks` started.
    """

    kind: str
    status: int = 500
    error_type: str = "api_error"
    message: str = "Internal server error"
    headers: Mapping[str, str] = field(default_factory=dict)
    after_blocks: int = 0


def http_error(
    status: int, error_type: str, message: str, headers: Mapping[str, str] | None = None
) -> Fault:
    """Answer the next request with this HTTP error."""
    return Fault(
        "http", status=status, error_type=error_type, message=message, headers=dict(headers or {})
    )


def rate_limited(retry_after: float | None = 1.0, *, in_ms: bool = False) -> Fault:
    """429 rate_limit_error with `retry-after` (seconds) or `retry-after-ms`."""
    headers: dict[str, str] = {}
    if retry_after is not None:
        if in_ms:
            headers["retry-after-ms"] = str(int(retry_after * 1000))
        else:
            headers["retry-after"] = f"{retry_after:g}"
    return http_error(
        429, "rate_limit_error", "Number of requests has exceeded your rate limit", headers
    )


def overloaded() -> Fault:
    """529 overloaded_error as an HTTP status."""
    return http_error(529, "overloaded_error", "Overloaded")


def server_error(status: int = 500) -> Fault:
    """A 5xx api_error."""
    return http_error(status, "api_error", "Internal server error")


def request_too_large() -> Fault:
    """413 request_too_large."""
    return http_error(
        413, "request_too_large", "Request exceeds the maximum allowed number of bytes."
    )


def overloaded_mid_stream(after_blocks: int = 0) -> Fault:
    """HTTP 200, then an SSE `error` event (overloaded_error) after `after_blocks` blocks."""
    return Fault(
        "stream_error",
        status=529,
        error_type="overloaded_error",
        message="Overloaded",
        after_blocks=after_blocks,
    )


def cut_stream(after_block_start: int = 0) -> Fault:
    """Drop the connection right after block `after_block_start` started (mid-block)."""
    return Fault("cut", after_blocks=after_block_start)
