"""Context collapse: a read-time projection that replaces old rounds by one-line summaries.

The message array is never edited. Spans of complete old rounds are summarized into the
`CollapseStore`; `project(messages)` returns a view in which each committed span is replaced
by one meta user message holding its summary. Spans are keyed by the uuids of their messages:
once the loop carries the projected view forward, or after an autocompact replaced the
history, the span is simply absent and projection is a no-op.

Spans are *staged* while the context is above a fraction of the threshold and *committed*
either when the pipeline needs the room or by `drain()` when the API said prompt too long
(the loop's collapse_drain_retry) — the cheapest recovery there is.

The default summarizer is deterministic and local: per round, the assistant's text (first
line, shortened) and each tool call as ``name(key input)``. It needs no model call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..messages.blocks import TextBlock, ToolUseBlock
from ..messages.types import AssistantMessage, Message, UserMessage, new_uuid, now_iso
from .rounds import head_end, round_starts
from .tokens import estimate_tokens

COLLAPSE_HEADER = "[Collapsed earlier work — one line per step; re-run tools if details matter]"
SpanSummarizer = Callable[[Sequence[Message]], str]


@dataclass(frozen=True, slots=True)
class CollapsedSpan:
    """A contiguous run of complete rounds and its summary message (stable uuid and bytes)."""

    uuids: tuple[str, ...]
    summary: UserMessage
    tokens: int


def _shorten(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _tool_line(block: ToolUseBlock) -> str:
    arguments = dict(block.input)
    key = next(
        (
            arguments[k]
            for k in ("file_path", "command", "pattern", "path", "url")
            if k in arguments
        ),
        None,
    )
    shown = key if key is not None else json.dumps(arguments, default=str)
    return f"{block.name}({_shorten(str(shown), 100)})"


def summarize_rounds(messages: Sequence[Message]) -> str:
    """The deterministic default summary: one line per assistant response."""
    lines = [COLLAPSE_HEADER]
    for message in messages:
        if _is_collapse_summary(message):
            assert isinstance(message, UserMessage) and isinstance(message.content, str)
            lines.extend(message.content.splitlines()[1:])
            continue
        if not isinstance(message, AssistantMessage):
            continue
        text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
        tools = [_tool_line(b) for b in message.content if isinstance(b, ToolUseBlock)]
        parts = [_shorten(text)] if text.strip() else []
        if tools:
            parts.append("called " + ", ".join(tools))
        if parts:
            lines.append("- " + "; ".join(parts))
    return "\n".join(lines)


@dataclass
class CollapseStore:
    """Committed and staged collapses of one session (mutable, owned by the pipeline)."""

    summarizer: SpanSummarizer = summarize_rounds
    keep_recent_rounds: int = 4
    committed: list[CollapsedSpan] = field(default_factory=list)
    staged: list[CollapsedSpan] = field(default_factory=list)

    def project(self, messages: Sequence[Message]) -> list[Message]:
        """`messages` with every committed span that is present replaced by its summary.
        Spans apply in commit order: a later span may cover an earlier span's summary."""
        out = list(messages)
        for span in self.committed:
            out = _replace_span(out, span)
        return out

    def stage(self, messages: Sequence[Message], target_tokens: int) -> int:
        """Stage one span of the oldest uncollapsed rounds, long enough that the projected
        view would hold about `target_tokens` (estimated) or less; the last
        `keep_recent_rounds` rounds are never staged. Replaces earlier staging; returns the
        number of rounds staged."""
        view = self.project(messages)
        self.staged = []
        excess = estimate_tokens(view) - target_tokens
        if excess <= 0:
            return 0
        spans = self._candidate_spans(view)
        taken = 0
        for begin, end in spans:
            excess -= estimate_tokens(view[begin:end])
            taken += 1
            if excess <= 0:
                break
        if taken == 0:
            return 0
        begin = spans[0][0]
        # Reach back over an earlier summary right before the span so one summary remains.
        if begin > 0 and _is_collapse_summary(view[begin - 1]):
            begin -= 1
        chunk = view[begin : spans[taken - 1][1]]
        self.staged.append(self._make_span(chunk))
        return taken

    def drain(self) -> bool:
        """Commit every staged span; whether anything was committed."""
        drained = bool(self.staged)
        self.committed.extend(self.staged)
        self.staged = []
        return drained

    def clear(self) -> None:
        """Forget every span (after an autocompact replaced the history)."""
        self.committed.clear()
        self.staged.clear()

    def _candidate_spans(self, view: Sequence[Message]) -> list[tuple[int, int]]:
        """(begin, end) of each old round that may be collapsed, oldest first: after the
        protected head, before the recent rounds, and not already a summary."""
        starts = [s for s in round_starts(view) if s >= head_end(view)]
        limit = len(starts) - self.keep_recent_rounds
        spans: list[tuple[int, int]] = []
        for position in range(max(0, limit)):
            begin = starts[position]
            end = starts[position + 1]
            spans.append((begin, end))
        return spans

    def _make_span(self, chunk: Sequence[Message]) -> CollapsedSpan:
        summary = UserMessage(
            content=self.summarizer(chunk), is_meta=True, uuid=new_uuid(), timestamp=now_iso()
        )
        return CollapsedSpan(tuple(m.uuid for m in chunk), summary, estimate_tokens(chunk))


def _replace_span(messages: list[Message], span: CollapsedSpan) -> list[Message]:
    first = span.uuids[0]
    for index, message in enumerate(messages):
        if message.uuid == first:
            window = messages[index : index + len(span.uuids)]
            if tuple(m.uuid for m in window) == span.uuids:
                return [*messages[:index], span.summary, *messages[index + len(span.uuids) :]]
            return messages
    return messages


def _is_collapse_summary(message: Message) -> bool:
    return (
        isinstance(message, UserMessage)
        and message.is_meta
        and isinstance(message.content, str)
        and message.content.startswith(COLLAPSE_HEADER)
    )
