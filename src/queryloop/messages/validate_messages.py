"""The Messages API's rules for the `messages` array (used by `validate_api_request`).

The API combines consecutive messages of the same role into one turn, so adjacency rules
(tool_result placement, final assistant turn) are checked on those combined turns, exactly
as the API sees them. See docs/messages.md for the source of each rule.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .validate_blocks import check_block, check_cache_control
from .violation import Violation

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


@dataclass
class _Turn:
    """Consecutive messages of one role, as the API combines them."""

    role: str
    first_index: int
    last_index: int
    blocks: list[tuple[str, Mapping[str, Any]]] = field(default_factory=list)


def final_turn_first_assistant(messages: Sequence[Mapping[str, Any]]) -> int | None:
    """Index of the first assistant message of an unfinished tool loop at the end, if any.

    The array ends inside a tool loop when its last message is a user message that starts
    with a tool_result; the loop runs back over (assistant, tool_result-led user) pairs.
    Expects alternating roles and list content.
    """
    j = len(messages) - 1
    first: int | None = None
    while j >= 1 and _results_led(messages[j]) and messages[j - 1].get("role") == "assistant":
        first = j - 1
        j -= 2
    return first


def _results_led(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list) or not content:
        return False
    first = content[0]
    return isinstance(first, Mapping) and first.get("type") == "tool_result"


def validate_messages(
    messages: Any,
    *,
    thinking_enabled: bool,
    cache: list[tuple[str, Mapping[str, Any]]] | None = None,
) -> list[Violation]:
    """Every rule the `messages` array breaks. Cache_control markers found go to `cache`."""
    if not isinstance(messages, list) or not messages:
        return [Violation("messages.empty", "messages must be a non-empty list", "messages")]
    out: list[Violation] = []
    turns = _combine(messages, out, cache if cache is not None else [])
    if not turns:
        return out
    if turns[0].role != "user":
        out.append(
            Violation(
                "messages.first_role", "the first message must be a user message", "messages[0]"
            )
        )
    _check_tool_ids_unique(turns, out)
    _check_pairing(turns, out)
    _check_assistant_turns(turns, out, thinking_enabled)
    if thinking_enabled:
        _check_final_turn_thinking(turns, out)
    return out


def _combine(
    messages: list[Any], out: list[Violation], cache: list[tuple[str, Mapping[str, Any]]]
) -> list[_Turn]:
    turns: list[_Turn] = []
    last = len(messages) - 1
    for i, message in enumerate(messages):
        path = f"messages[{i}]"
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            out.append(Violation("messages.role", "role must be 'user' or 'assistant'", path))
            continue
        role = str(message["role"])
        blocks = _message_blocks(message, path, i == last and role == "assistant", out)
        for block_path, block in blocks:
            check_block(block, block_path, role, out)
            check_cache_control(block, block_path, out, cache)
        if turns and turns[-1].role == role:
            turns[-1].blocks.extend(blocks)
            turns[-1].last_index = i
        else:
            turns.append(_Turn(role, i, i, blocks))
    return turns


def _message_blocks(
    message: Mapping[str, Any], path: str, final_assistant: bool, out: list[Violation]
) -> list[tuple[str, Mapping[str, Any]]]:
    content = message.get("content")
    if isinstance(content, str):
        if not content and not final_assistant:
            out.append(Violation("messages.content_empty", "message content is empty", path))
            return []
        return [(f"{path}.content", {"type": "text", "text": content})] if content else []
    if not isinstance(content, list):
        out.append(Violation("messages.content_type", "content must be a string or a list", path))
        return []
    if not content and not final_assistant:
        out.append(Violation("messages.content_empty", "message content is empty", path))
    blocks: list[tuple[str, Mapping[str, Any]]] = []
    for j, block in enumerate(content):
        if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
            out.append(
                Violation(
                    "block.invalid",
                    "a content block must be an object with a type",
                    f"{path}.content[{j}]",
                )
            )
            continue
        blocks.append((f"{path}.content[{j}]", block))
    return blocks


def _check_tool_ids_unique(turns: list[_Turn], out: list[Violation]) -> None:
    seen: set[str] = set()
    for turn in turns:
        for path, block in turn.blocks:
            if block.get("type") != "tool_use":
                continue
            tid = block.get("id")
            if not isinstance(tid, str) or not TOOL_ID.match(tid):
                out.append(
                    Violation(
                        "tool_use.id_pattern",
                        f"tool_use id {tid!r} must match {TOOL_ID.pattern}",
                        path,
                    )
                )
            elif tid in seen:
                out.append(
                    Violation("tool_use.duplicate_id", f"tool_use id {tid!r} is not unique", path)
                )
            else:
                seen.add(tid)


def _tool_use_ids(turn: _Turn | None) -> list[tuple[str, str]]:
    if turn is None or turn.role != "assistant":
        return []
    return [(str(b.get("id")), p) for p, b in turn.blocks if b.get("type") == "tool_use"]


def _check_pairing(turns: list[_Turn], out: list[Violation]) -> None:
    for k, turn in enumerate(turns):
        expected = _tool_use_ids(turn)
        following = turns[k + 1] if k + 1 < len(turns) else None
        if expected and (following is None or following.role != "user"):
            for tid, path in expected:
                out.append(_unanswered(tid, path))
        if turn.role == "user":
            _check_user_turn(turn, dict(_tool_use_ids(turns[k - 1] if k else None)), out)


def _unanswered(tid: str, path: str) -> Violation:
    return Violation(
        "tool_use.unanswered",
        f"tool_use {tid!r} has no tool_result at the start of the next user message",
        path,
    )


def _check_user_turn(turn: _Turn, expected: dict[str, str], out: list[Violation]) -> None:
    leading: set[str] = set()
    other_seen = False
    for path, block in turn.blocks:
        if block.get("type") != "tool_result":
            other_seen = True
            continue
        tid = str(block.get("tool_use_id"))
        if other_seen:
            out.append(
                Violation(
                    "tool_result.not_first",
                    "tool_result blocks must come before any other content",
                    path,
                )
            )
        if tid not in expected:
            out.append(
                Violation(
                    "tool_result.unknown_id",
                    f"tool_result {tid!r} has no tool_use in the previous assistant message",
                    path,
                )
            )
        elif tid in leading:
            out.append(
                Violation("tool_result.duplicate_id", f"tool_result {tid!r} appears twice", path)
            )
        elif not other_seen:
            leading.add(tid)
    for tid, path in expected.items():
        if tid not in leading:
            out.append(_unanswered(tid, path))


def _check_assistant_turns(
    turns: list[_Turn], out: list[Violation], thinking_enabled: bool
) -> None:
    for turn in turns:
        if turn.role != "assistant" or not turn.blocks:
            continue
        path, last = turn.blocks[-1]
        if last.get("type") in THINKING_TYPES:
            out.append(
                Violation(
                    "assistant.final_block_thinking",
                    "an assistant message cannot end with a thinking block",
                    path,
                )
            )
    final = turns[-1]
    if final.role != "assistant":
        return
    path = f"messages[{final.last_index}]"
    if thinking_enabled and (
        not final.blocks or final.blocks[0][1].get("type") not in THINKING_TYPES
    ):
        out.append(
            Violation(
                "thinking.prefill",
                "with thinking enabled, a final assistant message (prefill) must start "
                "with a thinking block",
                path,
            )
        )
    elif not thinking_enabled and any(b.get("type") in THINKING_TYPES for _, b in final.blocks):
        out.append(
            Violation(
                "thinking.disabled_in_final_assistant",
                "with thinking disabled a final assistant message cannot contain thinking",
                path,
            )
        )
    if final.blocks:
        block_path, block = final.blocks[-1]
        text = block.get("text")
        if block.get("type") == "text" and isinstance(text, str) and text != text.rstrip():
            out.append(
                Violation(
                    "assistant.trailing_whitespace",
                    "a final assistant message cannot end with whitespace",
                    block_path,
                )
            )


def _check_final_turn_thinking(turns: list[_Turn], out: list[Violation]) -> None:
    as_messages = [{"role": t.role, "content": [b for _, b in t.blocks]} for t in turns]
    start = final_turn_first_assistant(as_messages)
    if start is None:
        return
    blocks = turns[start].blocks
    if not blocks or blocks[0][1].get("type") not in THINKING_TYPES:
        out.append(
            Violation(
                "thinking.last_assistant_must_start_with_thinking",
                "with thinking enabled, the assistant message that opened the unfinished "
                "tool loop must start with a thinking block",
                f"messages[{turns[start].first_index}]",
            )
        )
