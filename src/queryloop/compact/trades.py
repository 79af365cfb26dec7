"""Measure what shrinking the context would free and cost, for a cost-aware policy.

Everything is in the pipeline's message estimates (`tokens.estimate_message_tokens`), so
the system prompt and the tools, which no shrink touches and which stay cached, are left out
of both sides.

Where the cache breaks: a request reads the longest prefix an earlier request wrote, and the
API looks for it at most `LOOKBACK_BLOCKS` content blocks before the request's last
breakpoint. A change to a message further back than that is not found at all: everything
after the system prompt is written again. `clearing_trade` counts that.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

from ..messages.types import AssistantMessage, AttachmentMessage, Message, UserMessage
from .microcompact import clear_results
from .policy import SummaryFacts, Trade
from .restore import RestoreContext, restored_tokens_bound

LOOKBACK_BLOCKS = 20
"""How far back the API looks for a cached prefix (Anthropic's prompt-caching docs: "about
20 blocks before your explicit breakpoint"; `queryloop.testing` simulates the same)."""

Tokens = Callable[[Message], int]


def _blocks(message: Message) -> int:
    """Content blocks `message` becomes in a request (roughly: attachments are one)."""
    if isinstance(message, UserMessage | AssistantMessage):
        return 1 if isinstance(message.content, str) else len(message.content)
    return 1 if isinstance(message, AttachmentMessage) else 0


def clearing_trade(
    view: Sequence[Message], ids: Collection[str], *, cold: bool, tokens: Tokens
) -> Trade:
    """Clearing the results of `ids` in `view`: the tokens it frees, and what the next
    request writes again — nothing extra when the cache is `cold` (all of it is written
    anyway), else from the message before the first change to the end (one round earlier
    is where the last written prefix ends), or every message when that is beyond the
    lookback."""
    cleared, changed, freed = _clear(view, ids, tokens)
    if not changed or cold:
        return Trade(freed=freed, rewrite=0)
    start = max(0, changed[0] - 1)
    if sum(map(_blocks, cleared[start:])) > LOOKBACK_BLOCKS:
        start = 0
    return Trade(freed=freed, rewrite=sum(map(tokens, cleared[start:])))


def _clear(
    view: Sequence[Message], ids: Collection[str], tokens: Tokens
) -> tuple[list[Message], list[int], int]:
    """`view` with `ids` cleared, the indices that changed, and the tokens freed."""
    cleared = clear_results(view, ids)
    changed = [i for i, (a, b) in enumerate(zip(view, cleared, strict=True)) if a is not b]
    return cleared, changed, sum(tokens(view[i]) - tokens(cleared[i]) for i in changed)


def summary_facts(
    view: Sequence[Message],
    *,
    request_tokens: int,
    clearable: Collection[str],
    restore: RestoreContext,
    tokens: Tokens,
) -> SummaryFacts:
    """The numbers a summary of `view` is judged by; `clearable` are the ids of the old
    tool results that clearing would remove anyway."""
    return SummaryFacts(
        request_tokens=request_tokens,
        history_tokens=sum(map(tokens, view)),
        clearable_tokens=_clear(view, clearable, tokens)[2],
        restored_tokens=restored_tokens_bound(view, restore),
    )
