"""Prompt-cache breakpoints, placed the way the reference system places them.

Per request, exactly (at most) three `cache_control` markers:

* the last two system blocks -- the tools array sits before the system prompt in the cache
  prefix, so these cover the tools too (tools carry none);
* the last eligible content block of the conversation, moved forward every request. Thinking
  and redacted-thinking blocks and empty text blocks cannot carry a marker, so the walk goes
  back to the previous block that can.

Never more than `MAX_CACHE_BREAKPOINTS` (4, the API's limit) in total, counting markers the
input already had. Markers are added to copies: cached tool schemas, the builder's system
blocks and the message history are never modified.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any, cast

from ..messages.api_types import ApiContentBlock, ApiMessage, ApiSystemBlock
from ..messages.blocks import THINKING_TYPES

MAX_CACHE_BREAKPOINTS = 4
SYSTEM_BREAKPOINTS = 2
CACHE_TTLS = ("5m", "1h")


def cache_control(ttl: str) -> dict[str, Any]:
    """The marker for `ttl`; the 5-minute default is sent without an explicit ttl field."""
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


def can_carry_cache_control(block: Mapping[str, Any]) -> bool:
    """False for thinking blocks and for empty or whitespace-only text blocks."""
    if block.get("type") in THINKING_TYPES:
        return False
    return not (block.get("type") == "text" and not str(block.get("text", "")).strip())


def count_breakpoints(
    system: Sequence[Mapping[str, Any]],
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]] = (),
) -> int:
    """How many cache_control markers a request carries (system, tools and message blocks)."""
    n = sum("cache_control" in b for b in system) + sum("cache_control" in t for t in tools)
    return n + sum(_message_markers(m) for m in messages)


def _message_markers(message: Mapping[str, Any]) -> int:
    content = message.get("content")
    if not isinstance(content, list):
        return 0
    return sum(isinstance(b, Mapping) and "cache_control" in b for b in content)


class BreakpointCounter:
    """The markers already inside a growing message array, counting only the messages after
    the longest prefix shared with the last array counted (a request's normalized history
    is the previous request's plus its newest turns)."""

    def __init__(self) -> None:
        self._seen: list[Mapping[str, Any]] = []
        self._sums: list[int] = [0]

    def count(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """`count_breakpoints((), messages)`."""
        n = min(len(messages), len(self._seen))
        # List equality compares by identity first (C speed), then by value; value-equal
        # messages carry the same markers, so either way their counts can be reused.
        if list(messages[:n]) == self._seen[:n]:
            keep = n
        else:
            same = list(map(operator.is_, messages, self._seen))
            keep = same.index(False) if False in same else len(same)
        sums = self._sums[: keep + 1]
        for message in messages[keep:]:
            sums.append(sums[-1] + _message_markers(message))
        self._seen, self._sums = list(messages), sums
        return sums[-1]


def apply_cache_breakpoints(
    system: Sequence[ApiSystemBlock],
    messages: Sequence[ApiMessage],
    *,
    ttl: str | None,
    tools: Sequence[Mapping[str, Any]] = (),
    counter: BreakpointCounter | None = None,
) -> tuple[list[ApiSystemBlock], list[ApiMessage]]:
    """Copies of `system` and `messages` with the request's breakpoints; None ttl adds none.

    `tools` is only counted towards the limit (it never receives a marker). A session's
    `counter` counts the markers already in `messages` incrementally (same result).
    """
    out_system, out_messages = list(system), list(messages)
    if ttl is None:
        return out_system, out_messages
    marker = cache_control(ttl)
    if counter is None:
        present = count_breakpoints(system, messages, tools)
    else:
        present = count_breakpoints(system, (), tools) + counter.count(messages)
    budget = MAX_CACHE_BREAKPOINTS - present
    if budget > 0 and _mark_last_block(out_messages, marker):
        budget -= 1
    eligible = [i for i, b in enumerate(out_system) if b.get("text", "").strip()]
    for i in reversed(eligible[-SYSTEM_BREAKPOINTS:]):
        if budget <= 0:
            break
        if "cache_control" not in out_system[i]:
            out_system[i] = cast(ApiSystemBlock, {**out_system[i], "cache_control": dict(marker)})
            budget -= 1
    return out_system, out_messages


def _mark_last_block(messages: list[ApiMessage], marker: dict[str, Any]) -> bool:
    """Put `marker` on the last block that can carry one, replacing the message by a copy."""
    for mi in range(len(messages) - 1, -1, -1):
        content = messages[mi]["content"]
        for bi in range(len(content) - 1, -1, -1):
            if not can_carry_cache_control(content[bi]):
                continue
            if "cache_control" in content[bi]:
                return False  # already marked there: adding another would be a duplicate
            blocks: list[ApiContentBlock] = list(content)
            blocks[bi] = {**content[bi], "cache_control": dict(marker)}
            messages[mi] = {"role": messages[mi]["role"], "content": blocks}
            return True
    return False
