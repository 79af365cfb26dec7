"""What `query_loop()` yields: small frozen events a UI, a transcript or a test consumes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeAlias

from ..messages.types import Message
from ..messages.usage import Usage
from ..providers.base import StreamEvent
from ..providers.errors import ProviderError
from ..tasks.events import TaskEvent
from .reasons import Continue, Terminal


@dataclass(frozen=True, slots=True)
class RequestStart:
    """A model request is about to be sent (one per attempt)."""

    turn: int
    model: str


@dataclass(frozen=True, slots=True)
class ApiRetry:
    """A model request failed before any content with an error worth retrying, and is sent
    again in `delay_s` seconds: retry `attempt` of at most `max_retries` (the provider's
    `RetryPolicy` decides; see `providers.RetryWait`). A UI says so while the user waits;
    the last failure, if it comes to that, ends the query as usual (`TerminalEvent`)."""

    attempt: int
    max_retries: int
    delay_s: float
    error: ProviderError
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
class MessageDraft:
    """An assistant message as far as it is known, before a tool call it holds starts.

    Streaming tool execution starts a tool while the model is still writing, so the message
    holding its tool_use is not finished yet (no stop reason, no final usage). Persist the
    draft now, so that no tool runs before its call is durable: a kill while it runs leaves
    the call in the transcript, for resume to answer. The `MessageEvent` with the same uuid
    that follows supersedes it (in the array and in the transcript); a tombstone for that
    uuid voids it (a stream that was retried).
    """

    message: Message


class CompactTrigger(StrEnum):
    """What started a compaction (the `trigger` of its boundary message)."""

    AUTO = "auto"
    """The pipeline's autocompact, before a request, at the threshold."""
    REACTIVE = "reactive"
    """After the API said prompt-too-long."""
    MANUAL = "manual"
    """`/compact` or `Agent.compact()`."""


@dataclass(frozen=True, slots=True)
class CompactionEvent:
    """The history was summarised: `messages` REPLACES the whole array.

    The one way a compaction reaches the session (`queryloop.session.Session.apply`): the
    session swaps its array for `messages` and persists the new ones (boundary, summary,
    restored files, the kept tail), so the next request is built from it. Read-time views
    (tool-result budget, microcompact, collapse, server-side context editing) never replace
    the array; the pipeline re-applies them to every request.
    """

    messages: tuple[Message, ...]
    trigger: CompactTrigger
    pre_tokens: int = 0
    """Estimated tokens of the conversation before."""
    post_tokens: int = 0
    """Estimated tokens of `messages`."""


@dataclass(frozen=True, slots=True)
class TransitionEvent:
    """The loop is going on for `reason`."""

    reason: Continue
    turn: int


@dataclass(frozen=True, slots=True)
class TerminalEvent:
    """The loop ended. Always the last event. `detail` says why in words a person can use.

    `turn` is the number of turns the query ran (docs/loop.md, "Turns"): 1 + the tool
    round trips; `--max-turns` and `RunResult.turns` count the same thing."""

    reason: Terminal
    turn: int
    detail: str = ""
    error: BaseException | None = None
    messages: tuple[Message, ...] = ()
    """The loop's working array as it ended, read-time views applied (for hosts that drive
    `query()` themselves). A `Session` does not copy it: its array is built from the
    `MessageEvent`s and `CompactionEvent`s it applied."""
    output: Any = None
    """The prompt's structured output, validated (an instance of the output type, a dict for
    a JSON Schema), when the query asked for one and got it; else None."""


@dataclass(frozen=True, slots=True)
class SideUsage:
    """Tokens a side request spent (a tool-use summary, say): count them, not as a turn."""

    purpose: str
    model: str
    usage: Usage


LoopEvent: TypeAlias = (
    RequestStart
    | ApiRetry
    | StreamDelta
    | MessageEvent
    | MessageDraft
    | CompactionEvent
    | TransitionEvent
    | TaskEvent
    | TerminalEvent
    | SideUsage
)
"""`TaskEvent` (queryloop.tasks): a background task started, progressed or finished."""
