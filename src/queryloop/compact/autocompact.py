"""Autocompact and manual compact: summarize the conversation and start a new history.

The summary comes from the loop's `summarize(messages, prompt)` callable, which sends the
normal request with the compact prompt appended as the last user message (so it reads the
cached prefix). The new history is::

    compact_boundary (system)               trigger, pre_tokens, the user's messages so far
    summary (user, is_compact_summary)      the model's summary without its scratchpad
    the user's own messages (meta user)     verbatim when short; the first one always
    file attachments                        recently used files, read fresh from disk
    todo attachment                         the current todo list
    recent rounds, verbatim                 the latest tool calls and results

Delta attachments (tools, agents, ...) re-announce themselves because the history no longer
mentions them. A circuit breaker stops automatic attempts after repeated failures.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ..errors import QueryloopError
from ..messages.constructors import compact_boundary, user_message
from ..messages.types import Message
from .prompt import build_compact_prompt, format_summary, summary_message_text
from .restore import (
    RestoreContext,
    file_attachments,
    preserved_tail,
    todo_attachment,
    user_messages_message,
    user_texts,
)
from .tokens import estimate_tokens, token_count_with_estimation

Summarize = Callable[[Sequence[Message], str], Awaitable[str]]
"""The loop's summarizer: (history, compact instruction) -> the model's answer text."""
Trigger = Literal["auto", "manual", "reactive"]
MAX_CONSECUTIVE_FAILURES = 3


class CompactionError(QueryloopError):
    """A compaction could not produce a summary (the cause is chained)."""


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """The new history (to replace the old one and to persist), sizes before and after."""

    messages: list[Message]
    pre_tokens: int
    post_tokens: int
    summary: str
    trigger: Trigger = "auto"
    dropped_messages: int = 0
    """Oldest messages dropped because the compaction request itself was too long."""


@dataclass(frozen=True, slots=True)
class AutoCompactTracking:
    """Autocompact state that crosses loop iterations (part of the loop's `State`)."""

    compacted: bool = False
    turn_counter: int = 0
    consecutive_failures: int = 0

    @property
    def circuit_open(self) -> bool:
        """True after MAX_CONSECUTIVE_FAILURES failures in a row: stop trying automatically."""
        return self.consecutive_failures >= MAX_CONSECUTIVE_FAILURES

    def succeeded(self) -> AutoCompactTracking:
        """After a successful compaction."""
        return AutoCompactTracking(compacted=True, turn_counter=0, consecutive_failures=0)

    def failed(self) -> AutoCompactTracking:
        """After a failed compaction."""
        return replace(self, consecutive_failures=self.consecutive_failures + 1)

    def next_turn(self) -> AutoCompactTracking:
        """One more turn since the last compaction."""
        return replace(self, turn_counter=self.turn_counter + 1) if self.compacted else self


async def compact_conversation(
    messages: Sequence[Message],
    *,
    summarize: Summarize,
    trigger: Trigger,
    custom_instructions: str | None,
    restore: RestoreContext,
    pre_tokens: int | None = None,
    full_history: Sequence[Message] | None = None,
) -> CompactionResult:
    """Summarize `messages` and build the new history. Raises what `summarize` raises
    (PromptTooLongError in particular), or CompactionError for an empty summary.

    `full_history` is the history before any rounds were dropped to make the compaction
    request fit: the user's messages, files and todos are restored from it."""
    before = token_count_with_estimation(messages) if pre_tokens is None else pre_tokens
    raw = await summarize(messages, build_compact_prompt(custom_instructions))
    summary = format_summary(raw or "")
    if not summary:
        raise CompactionError("the model returned an empty summary; the history was kept")
    source = messages if full_history is None else full_history
    new = build_compacted_history(source, summary, trigger, before, restore)
    return CompactionResult(new, before, estimate_tokens(new), summary, trigger)


def build_compacted_history(
    messages: Sequence[Message],
    summary: str,
    trigger: Trigger,
    pre_tokens: int,
    restore: RestoreContext,
) -> list[Message]:
    """The new array after a summary (see the module docstring for its layout)."""
    budget = restore.tail_budget(estimate_tokens(messages))
    tail = preserved_tail(messages, budget, restore.min_tail_rounds)
    # The tail carries its own user messages verbatim; listing them too would duplicate them.
    texts = user_texts(messages[: len(messages) - len(tail)])
    boundary = compact_boundary(trigger, pre_tokens, user_messages=list(texts))
    body = summary_message_text(summary, suppress_follow_up=trigger != "manual")
    new: list[Message] = [boundary, user_message(body, is_compact_summary=True)]
    carried = user_messages_message(texts, restore)
    if carried is not None:
        new.append(carried)
    new.extend(file_attachments(messages, restore))
    todos = todo_attachment(messages, restore)
    if todos is not None:
        new.append(todos)
    new.extend(tail)
    return new
