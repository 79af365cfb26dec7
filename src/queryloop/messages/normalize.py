"""`normalize_messages_for_api`: the internal message array -> strict API messages.

The pipeline is the tuple `PASSES`, run in order; it is the only place the order is written.
Each pass is a small named function whose docstring says what it needs from the passes
before it and what it guarantees to the passes after it. Every pass is O(N) in the number
of messages and blocks, and none mutates its input.

Representation changes twice: the first passes work on internal `Message` objects,
`render_attachments` turns them into `Draft`s (role, wire blocks, API message id), and
`merge_messages` turns drafts into `ApiMessage` dicts, which the remaining passes use.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from .api_types import ApiMessage
from .normalize_context import (
    CONTINUE_TEXT,
    LEADING_PLACEHOLDER_TEXT,
    TOOL_LOOP_CLOSED_TEXT,
    Draft,
    NormalizeContext,
    make_context,
    tool_names,
)
from .passes_api import (
    check_invariants,
    drop_empty_text,
    ensure_alternation,
    merge_messages,
    pair_tool_results,
    tool_results_first,
)
from .passes_internal import (
    dedupe_by_uuid,
    drop_before_compact_boundary,
    drop_non_api_messages,
    render_attachments,
    reorder_attachments,
)
from .passes_thinking import (
    close_tool_turn_without_thinking,
    drop_trailing_thinking,
    strip_thinking,
)
from .thinking_mode import ThinkingSpec, ThinkingType
from .types import Message

__all__ = [
    "CONTINUE_TEXT",
    "LEADING_PLACEHOLDER_TEXT",
    "PASSES",
    "TOOL_LOOP_CLOSED_TEXT",
    "Draft",
    "NormalizeContext",
    "check_invariants",
    "close_tool_turn_without_thinking",
    "dedupe_by_uuid",
    "drop_before_compact_boundary",
    "drop_empty_text",
    "drop_non_api_messages",
    "drop_trailing_thinking",
    "ensure_alternation",
    "merge_messages",
    "normalize_messages_for_api",
    "pair_tool_results",
    "render_attachments",
    "reorder_attachments",
    "run_passes",
    "strip_thinking",
    "tool_names",
    "tool_results_first",
]

Pass: TypeAlias = Callable[[Any, NormalizeContext], Any]

PASSES: tuple[tuple[str, Pass], ...] = (
    ("drop_before_compact_boundary", drop_before_compact_boundary),
    ("dedupe_by_uuid", dedupe_by_uuid),
    ("reorder_attachments", reorder_attachments),
    ("drop_non_api_messages", drop_non_api_messages),
    ("render_attachments", render_attachments),
    ("merge_messages", merge_messages),
    ("tool_results_first", tool_results_first),
    ("drop_empty_text", drop_empty_text),
    ("strip_thinking", strip_thinking),
    ("pair_tool_results", pair_tool_results),
    ("drop_trailing_thinking", drop_trailing_thinking),
    ("close_tool_turn_without_thinking", close_tool_turn_without_thinking),
    ("ensure_alternation", ensure_alternation),
    ("check_invariants", check_invariants),
)
"""The normalization pipeline, in order. Tests and tools may run a prefix of it."""


def normalize_messages_for_api(
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] | None = None,
    *,
    thinking: ThinkingSpec = ThinkingType.ENABLED,
    thinking_enabled: bool | None = None,
    prefill: bool = True,
) -> list[ApiMessage]:
    """The internal array as the strict user/assistant messages the Messages API accepts.

    `tools` are the request's tool definitions (only their names matter here: a file
    attachment becomes a synthetic Read call only when a "Read" tool is defined).
    `thinking` is the request's `thinking` parameter (the object, None, or a `ThinkingType`):
    extended (`enabled`) and adaptive thinking have different rules. `thinking_enabled` is
    the older boolean form (True means `enabled`) and wins when given. `prefill=False` is
    for models that reject a final assistant message. The input is not modified; the same
    input always gives the same output, byte for byte.
    """
    ctx = make_context(tools, thinking, thinking_enabled, prefill)
    result: list[ApiMessage] = run_passes(list(messages), ctx, PASSES)
    return result


def run_passes(state: Any, ctx: NormalizeContext, passes: Sequence[tuple[str, Pass]]) -> Any:
    """Run `passes` in order on `state` (the first pass gets a list of internal messages)."""
    # The passes allocate many small dicts and lists but never a reference cycle, so the
    # cyclic garbage collector has nothing to find; pausing it keeps the time linear (its
    # full collections would rescan the whole, long-lived history again and again).
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _name, run in passes:
            state = run(state, ctx)
    finally:
        if collecting:
            gc.enable()
    return state
