"""`Session`: the one owner of a live conversation's message array, usage, cost and transcript.

The seeds' rule: the internal message array is the session's single source of truth; the UI,
persistence, export and compaction decisions all read it. So there is exactly one object that
holds it, and exactly three ways it changes:

- `append(message)`: a message was created (every `MessageEvent` of the loop, the prompt and
  its attachments). It is written to the transcript at once. A tombstone removes the message
  it voids; progress messages are written but kept out of the array (they are for UIs). A
  message whose draft was applied before (`MessageDraft`: the loop's assistant message as far
  as it is known, written before a tool call it holds starts) takes the draft's place.
- `replace(event)`: a compaction (auto, reactive or manual) swapped the history for a summary
  and a kept tail (`CompactionEvent`). The new messages are written after the boundary.
- `clear(session_id, transcript)`: `/clear` starts a fresh session.

`apply(event)` routes the loop's events to those. Every billed request is recorded once with
`record_usage(usage, model, kind)`: providers wrapped by `metered()` call it for every response
they stream (main turns, compaction summaries, side calls, and attempts that were cut off after
the API began billing them), and it writes one `usage` record with that `kind`.

`end_prompt(terminal)` closes a prompt: it counts its turns (docs/loop.md, "Turns") and writes
a `result` record, which `queryloop sessions` sums.

This module must not import the Agent or the CLI: they read the session, not the other way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from ..abort import AbortSignal
from ..loop.events import CompactionEvent, LoopEvent, MessageDraft, MessageEvent, TerminalEvent
from ..messages.blocks import ToolResultBlock
from ..messages.types import Message, ProgressMessage, TombstoneMessage, UserMessage, new_uuid
from ..messages.usage import Usage, estimate_streamed_tokens
from ..providers.base import (
    InputJsonDelta,
    MessageComplete,
    MessageDelta,
    MessageStart,
    ModelProvider,
    ModelRequest,
    ProviderWrapper,
    TextDelta,
    ThinkingDelta,
)
from ..tools.base import FileReadRecord
from .files import SeenFile, changed_entries, files_record
from .transcript import Transcript

Pricing = Callable[[Usage, str], float]
"""(usage, model) -> US dollars."""


class RequestKind(StrEnum):
    """Why a billed request was made (the `kind` of its transcript `usage` record)."""

    MAIN = "main"
    """A model response of the main loop (one per turn, plus recovery re-sends)."""
    COMPACT = "compact"
    """A compaction summary (auto, reactive or manual)."""
    SIDE = "side"
    """Any other call made for the session (titles, tool-use summaries, subagents, ...)."""
    INTERRUPTED = "interrupted"
    """An attempt the API began (and bills) that never completed: a cut stream that was
    retried, an overloaded model that fell back, an abort. Counted with the usage of its last
    `message_delta`, else with its `message_start` input usage and an estimate of the output
    that streamed (`estimated` is then true)."""


def model_table_price(usage: Usage, model: str) -> float:
    """What a response cost at the model table's prices (0 for models the table does not
    know, such as a local model behind an OpenAI-compatible server)."""
    from ..providers.models import cost_usd, get_model_info

    if not get_model_info(model).known:
        return 0.0
    return cost_usd(usage, model)


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One billed request as the session counted it."""

    kind: RequestKind
    model: str
    usage: Usage
    cost_usd: float
    purpose: str = ""
    estimated: bool = False
    """The output tokens are an estimate (an interrupted stream the API never counted)."""


@dataclass(frozen=True, slots=True)
class SessionTotals:
    """A snapshot of the session's counters; subtract two for what happened in between."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    requests: int = 0
    turns: int = 0
    prompts: int = 0

    def __sub__(self, other: SessionTotals) -> SessionTotals:
        names = [f.name for f in dataclasses.fields(Usage)]  # every counter, searches too
        usage = Usage(
            **{n: max(0, getattr(self.usage, n) - getattr(other.usage, n)) for n in names}
        )
        return SessionTotals(
            usage=usage,
            cost_usd=self.cost_usd - other.cost_usd,
            requests=self.requests - other.requests,
            turns=self.turns - other.turns,
            prompts=self.prompts - other.prompts,
        )


class Session:
    """The live state of one conversation (see the module docstring).

    `messages` is the array the next request is built from; read it, never keep a copy that
    you then send. Everything that changes it goes through this object.
    """

    def __init__(
        self,
        session_id: str,
        *,
        messages: Sequence[Message] = (),
        transcript: Transcript | None = None,
        totals: SessionTotals | None = None,
        price: Pricing = model_table_price,
        read_files: dict[str, FileReadRecord] | None = None,
        loaded_tools: list[str] | None = None,
    ) -> None:
        self.session_id = session_id
        self.read_files: dict[str, FileReadRecord] = read_files if read_files is not None else {}
        """What the agent has seen of files (`session.files`): the main thread's tool
        context holds this dict, and its changes are written after each tool result."""
        self.loaded_tools: list[str] = loaded_tools if loaded_tools is not None else []
        """The deferred tools ToolSearch loaded, in load order: the main thread's tool
        context holds this list (`ToolContext.loaded_deferred_tools`); when it grows, a
        `meta` record `loaded_deferred_tools` is written after the tool result, so a resumed
        session sends the same tools array (docs/context.md, "Session facts")."""
        self._loaded_written = len(self.loaded_tools)
        self._files_written: dict[str, SeenFile] = {
            path: SeenFile.of(r) for path, r in self.read_files.items()
        }
        self._messages: list[Message] = [m for m in messages if _kept(m)]
        self._transcript = transcript
        self._price = price
        totals = totals or SessionTotals()
        self.usage = totals.usage
        self.cost_usd = totals.cost_usd
        self.requests = totals.requests
        self.turns = totals.turns
        self.prompts = totals.prompts
        self.records: list[UsageRecord] = []
        """The billed requests recorded by this process, in order."""
        self.listeners: list[Callable[[UsageRecord], None]] = []
        """Called with each usage record (live cost displays)."""
        self._prompt_start: SessionTotals | None = None
        self._drafts: set[str] = set()
        """uuids of drafts in the array whose whole message has not come yet."""

    # ---- reading ------------------------------------------------------------------------

    @property
    def messages(self) -> tuple[Message, ...]:
        """The conversation's internal message array (read-only snapshot)."""
        return tuple(self._messages)

    @property
    def transcript(self) -> Transcript | None:
        """The JSONL writer (None for a session that is not persisted)."""
        return self._transcript

    def totals(self) -> SessionTotals:
        """The counters now (usage, cost, billed requests, turns, prompts)."""
        return SessionTotals(self.usage, self.cost_usd, self.requests, self.turns, self.prompts)

    # ---- changing the array -------------------------------------------------------------

    def attach(self, transcript: Transcript | None) -> None:
        """Write to `transcript` from now on (set once the session is assembled)."""
        self._transcript = transcript

    def append(self, message: Message) -> None:
        """A message was created: write it, and add it to the array (in its draft's place
        when one was applied)."""
        self._write(message)
        if _holds_tool_results(message):
            self._write_read_state()
            self._write_loaded_tools()
        if isinstance(message, TombstoneMessage):
            self._drafts.discard(message.target_uuid)
            self._messages = [m for m in self._messages if m.uuid != message.target_uuid]
        elif message.uuid in self._drafts:
            self._drafts.discard(message.uuid)
            self._messages = [message if m.uuid == message.uuid else m for m in self._messages]
        elif _kept(message):
            self._messages.append(message)

    def draft(self, message: Message) -> None:
        """A message as far as it is known (`MessageDraft`): write it now, marked partial, and
        hold it in the array until the whole message (the same uuid) is appended."""
        if self._transcript is not None:
            self._transcript.append(message, partial=True)
        if message.uuid in self._drafts:
            self._messages = [message if m.uuid == message.uuid else m for m in self._messages]
        else:
            self._drafts.add(message.uuid)
            self._messages.append(message)

    def replace(self, event: CompactionEvent) -> None:
        """A compaction: the array becomes `event.messages`, all written after the boundary
        so a reload rebuilds exactly this array. A message already written (the same uuid)
        is kept as a fresh copy: a transcript holds each uuid once."""
        known = {m.uuid for m in self._messages}
        new: list[Message] = []
        for message in event.messages:
            if message.uuid in known:
                message = dataclasses.replace(message, uuid=new_uuid())
            self._write(message)
            if _kept(message):
                new.append(message)
        self._messages = new

    def apply(self, event: LoopEvent) -> None:
        """Apply one loop event: messages are appended, compactions replace the array, the
        terminal event ends the prompt. Other events do not change the session; `SideUsage`
        in particular is informational here, because the side request's provider is metered
        (`metered()`), which also catches a side request that never reported back."""
        if isinstance(event, MessageEvent):
            self.append(event.message)
        elif isinstance(event, MessageDraft):
            self.draft(event.message)
        elif isinstance(event, CompactionEvent):
            self.replace(event)
        elif isinstance(event, TerminalEvent):
            self.end_prompt(event)

    def clear(self, session_id: str, transcript: Transcript | None) -> None:
        """Start over as a new, empty session (the REPL's /clear)."""
        if self._transcript is not None:
            self._transcript.close()
        self.session_id = session_id
        self._transcript = transcript
        self._messages = []
        self._drafts = set()
        self._files_written = {}  # the new transcript starts without them
        self._loaded_written = 0
        self._write_loaded_tools()  # the tool context keeps them: so does the new transcript
        self.usage = Usage()
        self.cost_usd = 0.0
        self.requests = self.turns = self.prompts = 0

    # ---- accounting ---------------------------------------------------------------------

    def record_usage(
        self,
        usage: Usage,
        model: str,
        kind: RequestKind = RequestKind.MAIN,
        *,
        purpose: str = "",
        estimated: bool = False,
    ) -> UsageRecord:
        """Count one billed request once: totals, cost, and one transcript `usage` record
        (`purpose` names a side request, e.g. "tool_use_summary"; `estimated`: its output
        tokens are an estimate)."""
        cost = self._price(usage, model)
        record = UsageRecord(kind, model, usage, cost, purpose, estimated)
        self.usage = self.usage + usage
        self.cost_usd += cost
        self.requests += 1
        self.records.append(record)
        if self._transcript is not None:
            self._transcript.append_usage(
                usage,
                cost_usd=cost,
                model=model,
                kind=kind.value,
                purpose=purpose,
                estimated=estimated,
            )
        for listener in self.listeners:
            listener(record)
        return record

    def begin_prompt(self) -> SessionTotals:
        """A prompt starts: remember the counters (its `result` record reports the change)."""
        self._prompt_start = self.totals()
        return self._prompt_start

    def end_prompt(self, terminal: TerminalEvent) -> None:
        """A prompt ended: count it and its turns, write a `result` record, sync the file."""
        self.prompts += 1
        self.turns += terminal.turn
        spent = self.totals() - (self._prompt_start or self.totals())
        self._prompt_start = None
        if self._transcript is not None:
            self._transcript.append_result(
                terminal=terminal.reason.value,
                turns=terminal.turn,
                requests=spent.requests,
                cost_usd=spent.cost_usd,
            )
            self._transcript.sync()

    def metered(
        self, provider: ModelProvider, kind: RequestKind = RequestKind.SIDE, *, purpose: str = ""
    ) -> MeteredProvider:
        """`provider`, with every response it streams recorded here as `kind`."""
        return MeteredProvider(provider, self, kind, purpose=purpose)

    def sync(self) -> None:
        """Make the transcript durable across an OS crash."""
        if self._transcript is not None:
            self._transcript.sync()

    def close(self) -> None:
        """Close the transcript (records are already written)."""
        if self._transcript is not None:
            self._transcript.close()

    # ---- internals ----------------------------------------------------------------------

    def _write(self, message: Message) -> None:
        if self._transcript is not None:
            self._transcript.append(message)

    def _write_loaded_tools(self) -> None:
        """A `meta` record with every loaded deferred tool, when more were loaded."""
        if len(self.loaded_tools) == self._loaded_written or self._transcript is None:
            return
        self._transcript.append_meta(loaded_deferred_tools=list(self.loaded_tools))
        self._loaded_written = len(self.loaded_tools)

    def _write_read_state(self) -> None:
        """A `files` record with the read-state entries that changed (`session.files`)."""
        changed = changed_entries(self.read_files, self._files_written)
        if not changed or self._transcript is None:
            return
        self._transcript.append_record(files_record(self.session_id, changed))
        self._files_written.update(changed)


def _holds_tool_results(message: Message) -> bool:
    return (
        isinstance(message, UserMessage)
        and not isinstance(message.content, str)
        and any(isinstance(b, ToolResultBlock) for b in message.content)
    )


def _kept(message: Message) -> bool:
    """Progress and tombstones are written to the transcript but are not conversation."""
    return not isinstance(message, ProgressMessage | TombstoneMessage)


class UsageSink(Protocol):
    """What a metered provider reports to (a `Session`, or anything with `record_usage`)."""

    def record_usage(
        self,
        usage: Usage,
        model: str,
        kind: RequestKind,
        *,
        purpose: str = "",
        estimated: bool = False,
    ) -> Any:
        """Count one billed request (`estimated`: its output tokens are an estimate)."""
        ...


class MeteredProvider(ProviderWrapper):
    """A provider wrapper that reports every billed response to a session, exactly once.

    A stream that ends with `MessageComplete` is recorded with its final usage under `kind`;
    one that the API began (`MessageStart`) but that never completed (cut, abandoned,
    aborted) is recorded as `RequestKind.INTERRUPTED` (see `_interrupted_usage`).
    Everything else (`name`, `aclose`, ...) is the wrapped provider's.
    """

    def __init__(
        self, inner: ModelProvider, sink: UsageSink, kind: RequestKind, *, purpose: str = ""
    ) -> None:
        super().__init__(inner)
        self.sink = sink
        self.kind = kind
        self.purpose = purpose

    async def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[Any]:
        """The wrapped provider's stream, metered."""
        started: MessageStart | None = None
        tally = _StreamTally()
        completed = False
        try:
            async for event in self.inner.stream(request, abort):
                if isinstance(event, MessageStart):
                    started = event
                elif isinstance(event, MessageComplete):
                    completed = True
                    response = event.response
                    self.sink.record_usage(
                        response.usage, response.model, self.kind, purpose=self.purpose
                    )
                else:
                    tally.feed(event)
                yield event
        finally:
            if started is not None and not completed:
                usage, estimated = _interrupted_usage(started.usage, tally)
                self.sink.record_usage(
                    usage,
                    started.model or request.model,
                    RequestKind.INTERRUPTED,
                    purpose=self.purpose,
                    estimated=estimated,
                )


@dataclass(slots=True)
class _StreamTally:
    """What an unfinished stream produced: characters streamed, the last counted usage."""

    chars: int = 0
    counted: Usage | None = None

    def feed(self, event: Any) -> None:
        if isinstance(event, TextDelta):
            self.chars += len(event.text)
        elif isinstance(event, ThinkingDelta):
            self.chars += len(event.thinking)
        elif isinstance(event, InputJsonDelta):
            self.chars += len(event.partial_json)
        elif isinstance(event, MessageDelta):
            self.counted = event.usage


def _interrupted_usage(start: Usage, tally: _StreamTally) -> tuple[Usage, bool]:
    """The usage to bill an interrupted response at, and whether its output is estimated.

    The last `message_delta` counted everything (its usage is cumulative); without one, the
    output is what streamed, estimated as the spinner does (`estimate_streamed_tokens`),
    never less than `message_start` reported."""
    if tally.counted is not None:
        return tally.counted, False
    guess = estimate_streamed_tokens(tally.chars)
    if guess <= start.output_tokens:
        return start, False
    return dataclasses.replace(start, output_tokens=guess), True
