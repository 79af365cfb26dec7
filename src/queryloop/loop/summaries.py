"""Tool-use summaries: a short label for each batch of tool calls, by a small fast model.

After a batch of tool calls the loop starts a summary request (seeds 16.1, 3.2.2: the
reference keeps it as `pendingToolUseSummary` and awaits it during the next model call).
Here the request runs as an asyncio task beside the next model call; it never blocks the
loop:

- after each model call the loop takes the summaries that are already done (no waiting) and
  carries the others over in `State.pending_tool_use_summary`;
- when the query ends, summaries still running get `grace` seconds, then are cancelled
  (and at once when the user aborted).

A summary becomes a `ToolUseSummaryMessage` in the array (normalization drops it: it never
reaches the API) and a `SideUsage` event, so its tokens and cost are counted. A failing
summarizer is logged and contributes nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..messages.blocks import TextBlock, ToolResultBlock, ToolUseBlock
from ..messages.types import Message, ToolUseSummaryMessage, UserMessage
from ..messages.usage import Usage
from .events import LoopEvent, MessageEvent, SideUsage, TerminalEvent

if TYPE_CHECKING:
    from ..abort import AbortSignal
    from ..providers.base import ModelProvider, ModelRequest

log = logging.getLogger(__name__)

SUMMARY_PURPOSE = "tool_use_summary"
DEFAULT_SUMMARY_MODEL = "claude-haiku-5-5"
DEFAULT_GRACE_S = 3.0
MAX_SUMMARY_TOKENS = 64
MAX_INPUT_CHARS = 300
MAX_RESULT_CHARS = 500
MAX_SUMMARY_CHARS = 120

SUMMARY_SYSTEM = (
    "You label what a coding agent just did. Given its tool calls and their results, reply "
    "with one short line (at most 8 words, no trailing period) in the past tense, such as "
    "'Read the config and ran the tests' or 'Fixed the off-by-one in parse()'. "
    "Reply with the line only."
)


@dataclass(frozen=True, slots=True)
class SummaryOutcome:
    """One finished summary: the message for the array, and what producing it cost."""

    message: ToolUseSummaryMessage
    usage: Usage
    model: str


class ToolUseSummarizer(Protocol):
    """Writes the summary of one batch of tool calls (None: no summary)."""

    async def __call__(
        self, calls: Sequence[ToolUseBlock], results: Sequence[Message]
    ) -> SummaryOutcome | None: ...


ENV_SWITCH = "QUERYLOOP_TOOL_USE_SUMMARIES"


def summaries_wanted(default: bool, env: Mapping[str, str] | None = None) -> bool:
    """`default`, unless `QUERYLOOP_TOOL_USE_SUMMARIES` is set to 0/false/off or 1/true/on."""
    value = (os.environ if env is None else env).get(ENV_SWITCH, "").strip().lower()
    if value in ("0", "false", "off", "no"):
        return False
    if value in ("1", "true", "on", "yes"):
        return True
    return default


def default_summary_model(provider_name: str) -> str | None:
    """The model table's Haiku on Anthropic. Elsewhere none: a local OpenAI-compatible server
    often serves one model, one request at a time, so a summary would queue in front of the
    next main request (name one with `summary_model=` to have them anyway)."""
    return DEFAULT_SUMMARY_MODEL if provider_name == "anthropic" else None


class ModelSummarizer:
    """A `ToolUseSummarizer` that asks a (small, fast) model through a provider."""

    def __init__(
        self,
        provider: ModelProvider,
        model: str,
        *,
        max_tokens: int = MAX_SUMMARY_TOKENS,
        abort: AbortSignal | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.max_tokens = max_tokens
        self.abort = abort

    async def __call__(
        self, calls: Sequence[ToolUseBlock], results: Sequence[Message]
    ) -> SummaryOutcome | None:
        from ..providers.base import complete

        if not calls:
            return None
        request = summary_request(self.model, calls, results, self.max_tokens)
        response = await complete(self.provider, request, self.abort)
        text = "".join(b.text for b in response.content if isinstance(b, TextBlock))
        line = clean_summary(text)
        if not line:
            return None
        message = ToolUseSummaryMessage(summary=line, tool_use_ids=tuple(c.id for c in calls))
        return SummaryOutcome(message, response.usage, response.model or self.model)


def summary_request(
    model: str, calls: Sequence[ToolUseBlock], results: Sequence[Message], max_tokens: int
) -> ModelRequest:
    """A small request: the calls (inputs cut short) and the start of each result."""
    from ..providers.base import ModelRequest

    prompt = describe_batch(calls, results)
    return ModelRequest(
        model=model,
        max_tokens=max_tokens,
        system=[{"type": "text", "text": SUMMARY_SYSTEM}],
        messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
    )


def describe_batch(calls: Sequence[ToolUseBlock], results: Sequence[Message]) -> str:
    """The text the summarizer reads: one entry per call, with the start of its result."""
    by_id = _results_by_id(results)
    lines: list[str] = []
    for call in calls:
        args = json.dumps(dict(call.input), ensure_ascii=False, sort_keys=True)
        lines.append(f"Tool: {call.name}\nInput: {_cut(args, MAX_INPUT_CHARS)}")
        result = by_id.get(call.id)
        if result is not None:
            status = "error" if result.is_error else "result"
            lines.append(f"{status.capitalize()}: {_cut(_result_text(result), MAX_RESULT_CHARS)}")
    return "\n\n".join(lines)


def clean_summary(text: str) -> str:
    """The first non-empty line, unquoted, without a trailing period, capped."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    line = line.strip("\"'`* ").rstrip(".")
    return _cut(line, MAX_SUMMARY_CHARS)


@dataclass(frozen=True, slots=True)
class PendingSummaries:
    """The summary tasks still running. Immutable: each operation returns a new value."""

    tasks: tuple[asyncio.Task[SummaryOutcome | None], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.tasks)

    def start(
        self,
        summarizer: ToolUseSummarizer,
        calls: Sequence[ToolUseBlock],
        results: Sequence[Message],
    ) -> PendingSummaries:
        """Start summarizing a batch (in the background) and track it."""
        if not calls:
            return self
        task = asyncio.ensure_future(_safe(summarizer, tuple(calls), tuple(results)))
        return PendingSummaries((*self.tasks, task))

    def take_ready(self) -> tuple[list[SummaryOutcome], PendingSummaries]:
        """The summaries already done, in start order, and what is still running."""
        done = [t for t in self.tasks if t.done()]
        running = tuple(t for t in self.tasks if not t.done())
        return _outcomes(done), PendingSummaries(running)

    async def settle(self, grace: float) -> list[SummaryOutcome]:
        """Wait at most `grace` seconds for the running summaries; cancel the rest."""
        if not self.tasks:
            return []
        if grace > 0:
            await asyncio.wait(self.tasks, timeout=grace)
        self.cancel()
        return _outcomes([t for t in self.tasks if t.done() and not t.cancelled()])

    def cancel(self) -> None:
        """Stop every running summary (the user aborted, or time is up)."""
        for task in self.tasks:
            if not task.done():
                task.cancel()


def outcome_events(outcomes: Sequence[SummaryOutcome]) -> list[LoopEvent]:
    """Per summary: its message, then its usage (for the session's token and cost totals)."""
    events: list[LoopEvent] = []
    for outcome in outcomes:
        events.append(MessageEvent(outcome.message))
        events.append(SideUsage(SUMMARY_PURPOSE, outcome.model, outcome.usage))
    return events


async def settle_terminal(
    pending: PendingSummaries, terminal: TerminalEvent, *, aborted: bool, grace: float
) -> AsyncIterator[LoopEvent]:
    """Before the last event: the summaries that finish in time, then the terminal event
    with them appended to its message array."""
    outcomes = [] if aborted else await pending.settle(grace)
    pending.cancel()
    for event in outcome_events(outcomes):
        yield event
    if not outcomes:
        yield terminal
        return
    messages = (*terminal.messages, *(o.message for o in outcomes))
    yield TerminalEvent(
        reason=terminal.reason,
        turn=terminal.turn,
        detail=terminal.detail,
        error=terminal.error,
        messages=messages,
    )


async def _safe(
    summarizer: ToolUseSummarizer,
    calls: tuple[ToolUseBlock, ...],
    results: tuple[Message, ...],
) -> SummaryOutcome | None:
    try:
        return await summarizer(calls, results)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.warning("tool-use summary failed; skipped", exc_info=True)
        return None


def _outcomes(tasks: Sequence[asyncio.Task[SummaryOutcome | None]]) -> list[SummaryOutcome]:
    out: list[SummaryOutcome] = []
    for task in tasks:
        if task.cancelled():
            continue
        result = task.result()  # _safe never raises but CancelledError
        if result is not None:
            out.append(result)
    return out


def _results_by_id(results: Sequence[Message]) -> dict[str, ToolResultBlock]:
    found: dict[str, ToolResultBlock] = {}
    for message in results:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    found[block.tool_use_id] = block
    return found


def _result_text(block: ToolResultBlock) -> str:
    if isinstance(block.content, str):
        return block.content
    return "\n".join(b.text if isinstance(b, TextBlock) else f"[{b.type}]" for b in block.content)


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
