"""Reactive compact: recover from prompt-too-long, even when compacting is itself too long.

The API refused the request as too long. Compact once; if the compaction request is refused
too (it holds the same history), drop the oldest API-round groups — as many as the error's
``actual_tokens - max_tokens`` says, or a fifth of the history when the error does not say —
and try again, a bounded number of times. The first user message (the task) is never
dropped. Every intermediate array is cut between complete rounds, so it stays valid; when
everything fails the caller gets None and the old history is untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..errors import QueryloopError
from ..messages.constructors import meta_user_message
from ..messages.types import Message
from ..providers.errors import PromptTooLongError
from .autocompact import CompactionResult, Summarize, Trigger, compact_conversation
from .restore import WITHIN_SERVER_WINDOW, RestoreContext, capped_restore
from .rounds import head_end, round_starts
from .tokens import estimate_tokens, token_count_with_estimation

MAX_PTL_RETRIES = 3
UNKNOWN_OVERFLOW_FRACTION = 0.2
"""Share of the history dropped per retry when the error does not give token counts."""
SAFETY_MARGIN_TOKENS = 2_000
FIT_SHARE = 0.7
"""A reactive compaction's result must stay under this share of the server's window."""
DROPPED_MARKER = "[Earlier conversation dropped to fit the context window:"


def truncate_head_for_ptl_retry(
    messages: Sequence[Message], tokens_to_free: int
) -> list[Message] | None:
    """Drop the oldest complete rounds after the protected head until about
    `tokens_to_free` (estimated) are gone; the last round always stays. None when nothing
    can be dropped."""
    begin = head_end(messages)
    starts = [s for s in round_starts(messages) if s > begin]
    if not starts or begin >= len(messages):
        return None
    freed, cut = 0, begin
    for start in starts:
        freed += estimate_tokens(messages[cut:start])
        cut = start
        if freed >= tokens_to_free:
            break
    dropped = cut - begin
    marker = meta_user_message(
        f"{DROPPED_MARKER} {dropped} messages. The task is stated above; recent work follows.]"
    )
    return [*messages[:begin], marker, *messages[cut:]]


def _tokens_to_free(messages: Sequence[Message], error: PromptTooLongError | None) -> int:
    if error is not None and error.actual_tokens and error.max_tokens:
        overflow = error.actual_tokens - error.max_tokens
        if overflow > 0:
            return overflow + SAFETY_MARGIN_TOKENS
    return max(1, int(estimate_tokens(messages) * UNKNOWN_OVERFLOW_FRACTION))


async def compact_with_retries(
    messages: Sequence[Message],
    *,
    summarize: Summarize,
    restore: RestoreContext,
    trigger: Trigger,
    custom_instructions: str | None = None,
    max_retries: int = MAX_PTL_RETRIES,
    original_error: PromptTooLongError | None = None,
) -> CompactionResult:
    """`compact_conversation`, shrinking the input when the compaction request itself is
    too long. Raises the last PromptTooLongError when every retry was too long too."""
    pre_tokens = token_count_with_estimation(messages)
    current: Sequence[Message] = messages
    dropped = 0
    for attempt in range(max_retries + 1):
        try:
            result = await compact_conversation(
                current,
                summarize=summarize,
                trigger=trigger,
                custom_instructions=custom_instructions,
                restore=restore,
                pre_tokens=pre_tokens,
                full_history=messages,
            )
        except PromptTooLongError as error:
            hint = error if error.actual_tokens and error.max_tokens else original_error
            shorter = truncate_head_for_ptl_retry(current, _tokens_to_free(current, hint))
            if attempt == max_retries or shorter is None:
                raise
            dropped += len(current) - len(shorter) + 1
            current = shorter
            continue
        return _with_dropped(result, dropped)
    raise AssertionError("unreachable")  # pragma: no cover


def _with_dropped(result: CompactionResult, dropped: int) -> CompactionResult:
    if not dropped:
        return result
    return CompactionResult(
        result.messages,
        result.pre_tokens,
        result.post_tokens,
        result.summary,
        result.trigger,
        dropped_messages=dropped,
    )


async def reactive_compact(
    messages: Sequence[Message],
    *,
    summarize: Summarize,
    restore: RestoreContext,
    error: PromptTooLongError | None,
) -> CompactionResult | None:
    """Compact after the API said prompt too long; None when no compaction succeeded (the
    loop then ends with prompt_too_long and the history is unchanged)."""
    window = error.max_tokens if error is not None and error.max_tokens else None
    if window is not None:
        # The server's window is the one that counts (it may be smaller than the client
        # believed): what is restored after the summary must fit well inside it.
        restore = capped_restore(restore, window, WITHIN_SERVER_WINDOW)
    try:
        result = await compact_with_retries(
            messages,
            summarize=summarize,
            restore=restore,
            trigger="reactive",
            original_error=error,
        )
        if window is not None and estimate_tokens(result.messages) > FIT_SHARE * window:
            lean = replace(restore, keep_tail_tokens=0, file_budget_tokens=0, min_tail_rounds=0)
            result = await compact_with_retries(
                messages,
                summarize=summarize,
                restore=lean,
                trigger="reactive",
                original_error=error,
            )
        return result
    except QueryloopError:
        # Provider errors and empty summaries mean "could not recover": the loop reports
        # prompt_too_long with the history unchanged. Bugs still propagate.
        return None
