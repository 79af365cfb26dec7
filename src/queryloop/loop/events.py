"""What `query_loop()` yields: small frozen events a UI, a transcript or a test consumes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from ..messages.types import Message
from ..messages.usage import Usage
from ..providers.base import StreamEvent
from .reasons import Continue, Terminal


@dataclass(frozen=True, slots=True)
class RequestStart:
    """A model request is about to be sent (one per attempt)."""

    turn: int
    model: str


@dataclass(frozen=True, slots=True)
class StreamDelta:
    """A raw provider event (text, thinking and tool-input deltas) for live UIs."""

    event: StreamEvent


@dataclass(frozen=True, slots=True)
class MessageEvent:
    """A message was created and appended to the array (persist it now)."""

    message: Message


@dataclass(frozen=True, slots=True)
class TransitionEvent:
    """The loop is going on for `reason`."""

    reason: Continue
    turn: int


@dataclass(frozen=True, slots=True)
class TerminalEvent:
    """The loop ended. Always the last event. `detail` says why in words a person can use."""

    reason: Terminal
    turn: int
    detail: str = ""
    error: BaseException | None = None
    messages: tuple[Message, ...] = ()
    """The whole array as the loop left it (after any compaction): the next query's input."""


@dataclass(frozen=True, slots=True)
class SideUsage:
    """Tokens a side request spent (a tool-use summary, say): count them, not as a turn."""

    purpose: str
    model: str
    usage: Usage


LoopEvent: TypeAlias = (
    RequestStart | StreamDelta | MessageEvent | TransitionEvent | TerminalEvent | SideUsage
)
