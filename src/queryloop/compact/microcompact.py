"""Microcompact: clear the content of old tool results, keep the structure.

Two paths, chosen by the prompt cache's temperature:

* **Cold cache** — more than `cache_ttl_s` seconds since the last assistant message, so the
  cached prefix has expired anyway: the content of old results of clearable tools (all but the
  `keep_recent` most recent) is replaced locally by ``[Old tool result content cleared]``.
  tool_use ids, the tool_use blocks and the pairing are untouched.
* **Warm cache** — local content is left alone (editing it would move the cached prefix).
  Instead the Anthropic API's server-side *context editing* does the clearing: the returned
  `context_management` config goes into ``ModelRequest.context_management`` and the beta header
  `CONTEXT_MANAGEMENT_BETA` into ``ModelRequest.betas``.

What the API accepts (beta ``context-management-2025-06-27``; anthropic SDK type
``BetaContextManagementConfigParam``)::

    {"edits": [{
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": N},   # or {"type": "tool_uses", ...};
                                                           # API default: 100,000 input tokens
        "keep": {"type": "tool_uses", "value": K},         # recent uses kept; API default 3
        "clear_at_least": {"type": "input_tokens", "value": M},  # clear only if >= M freed
        "exclude_tools": ["Edit", ...],                    # never cleared
        "clear_tool_inputs": False,                        # or a list of tool names
    }]}

The API clears the oldest tool results first, replaces them with a placeholder server-side,
and invalidates the cached prefix from the first cleared result; `clear_at_least` makes each
invalidation worth its cache write. There is no include-list, so the tools that are not
clearable are sent as `exclude_tools`.

Clears are sticky: ids cleared once are passed back in `already_cleared` and cleared again on
every later call, so the bytes of earlier requests never change back.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..messages.blocks import ToolResultBlock
from ..messages.types import AssistantMessage, Message, UserMessage
from .rounds import tool_names_by_id

CLEARED_PLACEHOLDER = "[Old tool result content cleared]"
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
CLEAR_TOOL_USES_EDIT = "clear_tool_uses_20250919"
DEFAULT_CLEARABLE_TOOLS = frozenset({"Read", "Bash", "Grep", "Glob", "WebFetch", "WebSearch", "LS"})


@dataclass(frozen=True, slots=True)
class MicrocompactResult:
    """Messages after local clearing, the ids cleared by this call (not earlier ones), and
    the server-side context-management config to send (None when not applicable)."""

    messages: list[Message]
    cleared_tool_use_ids: tuple[str, ...]
    context_management: dict[str, Any] | None


def microcompact(
    messages: Sequence[Message],
    *,
    now: float,
    last_assistant_time: float | None,
    cache_ttl_s: float = 300,
    keep_recent: int = 3,
    clearable_tools: Collection[str] = DEFAULT_CLEARABLE_TOOLS,
    already_cleared: Collection[str] = (),
    server_side: bool = True,
    server_trigger_tokens: int = 100_000,
    server_clear_at_least: int = 20_000,
    clear_cold: bool = True,
    names: dict[str, str] | None = None,
) -> MicrocompactResult:
    """Clear old clearable tool results locally when the cache is cold (and `clear_cold`,
    which the pipeline turns off while the context is small); when it is warm, keep the
    local content and return the server-side context-management config. `names` is
    `tool_names_by_id(messages)` when the caller already has it."""
    if names is None:
        names = tool_names_by_id(messages)
    cold = is_cold(now, last_assistant_time, cache_ttl_s)
    fresh: list[str] = []
    if cold and clear_cold:
        fresh = [
            i
            for i in clearable_ids(messages, names, clearable_tools, keep_recent)
            if i not in already_cleared
        ]
    out = clear_results(messages, set(already_cleared) | set(fresh))
    config = None
    if server_side and not cold:
        config = context_management_config(
            names.values(),
            clearable_tools,
            keep_recent=keep_recent,
            trigger_tokens=server_trigger_tokens,
            clear_at_least=server_clear_at_least,
        )
    return MicrocompactResult(out, tuple(fresh), config)


def is_cold(now: float, last_assistant_time: float | None, cache_ttl_s: float) -> bool:
    """Whether the cached prefix has expired: no assistant message within `cache_ttl_s`."""
    return last_assistant_time is None or now - last_assistant_time > cache_ttl_s


def clearable_ids(
    messages: Sequence[Message],
    names: dict[str, str],
    clearable_tools: Collection[str],
    keep_recent: int,
) -> list[str]:
    """Ids of results of clearable tools, oldest first, minus the `keep_recent` newest."""
    ids: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            for block in message.content:
                if (
                    isinstance(block, ToolResultBlock)
                    and names.get(block.tool_use_id) in clearable_tools
                    and block.content != CLEARED_PLACEHOLDER
                ):
                    ids.append(block.tool_use_id)
    return ids[: max(0, len(ids) - keep_recent)]


def clear_results(messages: Sequence[Message], ids: Collection[str]) -> list[Message]:
    """`messages` with the results of `ids` replaced by the placeholder."""
    if not ids:
        return list(messages)
    return [_clear(m, ids) for m in messages]


def _clear(message: Message, ids: Collection[str]) -> Message:
    if not isinstance(message, UserMessage) or isinstance(message.content, str):
        return message
    if not any(isinstance(b, ToolResultBlock) and b.tool_use_id in ids for b in message.content):
        return message
    blocks = tuple(
        replace(b, content=CLEARED_PLACEHOLDER)
        if isinstance(b, ToolResultBlock) and b.tool_use_id in ids
        else b
        for b in message.content
    )
    return replace(message, content=blocks)


def context_management_config(
    tool_names: Collection[str],
    clearable_tools: Collection[str],
    *,
    keep_recent: int,
    trigger_tokens: int,
    clear_at_least: int,
) -> dict[str, Any]:
    """The `context_management` request field for server-side clearing of tool results."""
    excluded = sorted({n for n in tool_names if n not in clearable_tools})
    edit: dict[str, Any] = {
        "type": CLEAR_TOOL_USES_EDIT,
        "trigger": {"type": "input_tokens", "value": max(1, trigger_tokens)},
        "keep": {"type": "tool_uses", "value": max(0, keep_recent)},
        "clear_at_least": {"type": "input_tokens", "value": max(0, clear_at_least)},
    }
    if excluded:
        edit["exclude_tools"] = excluded
    return {"edits": [edit]}


def last_assistant_timestamp(messages: Sequence[Message]) -> str | None:
    """The ISO timestamp of the last assistant message, if any."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message.timestamp
    return None
