"""Snip: drop the oldest middle of the history, keep its head and its recent tail.

The cheapest global stage. The first user message (the task) and everything before the first
round are kept, as is a tail of recent rounds worth at least `keep_tail_tokens`; the rounds in
between are removed and a one-line meta user message says how many messages were snipped.
Cuts are made only at safe round starts (see `rounds`), so pairing stays valid. The tokens
freed are returned: the loop's last usage still counts them, so the autocompact check must
subtract them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..messages.constructors import meta_user_message
from ..messages.types import Message, UserMessage
from .rounds import head_end, round_starts
from .tokens import estimate_message_tokens, estimate_tokens

SNIP_MARKER_PREFIX = "[Earlier conversation snipped:"


@dataclass(frozen=True, slots=True)
class SnipResult:
    """The snipped messages and an estimate of the tokens removed (0 when nothing was)."""

    messages: list[Message]
    tokens_freed: int


def snip_history(
    messages: Sequence[Message], *, enabled: bool, keep_head: int, keep_tail_tokens: int
) -> SnipResult:
    """Remove the rounds between the protected head and a recent tail of `keep_tail_tokens`."""
    if not enabled:
        return SnipResult(list(messages), 0)
    start = head_end(messages, keep_head)
    end = _tail_start(messages, keep_tail_tokens)
    if end <= start:
        return SnipResult(list(messages), 0)
    removed = messages[start:end]
    head = [m for m in messages[:start] if not is_snip_marker(m)]
    previous = sum(_snipped_count(m) for m in messages[:start])
    marker = meta_user_message(
        f"{SNIP_MARKER_PREFIX} {previous + len(removed)} older messages were removed to save "
        f"context. The task and recent work follow.]"
    )
    freed = estimate_tokens(removed) - estimate_message_tokens(marker)
    freed += sum(estimate_message_tokens(m) for m in messages[:start] if is_snip_marker(m))
    return SnipResult([*head, marker, *messages[end:]], max(0, freed))


def _tail_start(messages: Sequence[Message], keep_tail_tokens: int) -> int:
    """The latest safe round start whose suffix holds at least `keep_tail_tokens` (the last
    round is always kept)."""
    starts = round_starts(messages)
    if not starts:
        return 0
    suffix = 0
    cursor = len(messages)
    for start in reversed(starts):
        suffix += estimate_tokens(messages[start:cursor])
        cursor = start
        if suffix >= keep_tail_tokens:
            return start
    return starts[0]


def is_snip_marker(message: Message) -> bool:
    """Whether `message` is the meta marker a snip leaves."""
    return (
        isinstance(message, UserMessage)
        and message.is_meta
        and isinstance(message.content, str)
        and message.content.startswith(SNIP_MARKER_PREFIX)
    )


def _snipped_count(message: Message) -> int:
    if not is_snip_marker(message):
        return 0
    assert isinstance(message, UserMessage) and isinstance(message.content, str)
    word = message.content[len(SNIP_MARKER_PREFIX) :].split()[0]
    return int(word) if word.isdigit() else 0
