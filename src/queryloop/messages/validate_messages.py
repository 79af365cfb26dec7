"""The Messages API's rules for the `messages` array (used by `validate_api_request`).

The API combines consecutive messages of the same role into one turn, so adjacency rules
(tool_result placement, final assistant turn) are checked on those combined turns, exactly
as the API sees them; the merge itself is only a warning. Role "system" messages
(mid-conversation system messages) are checked by their own placement rules and are
transparent to the turn rules. See docs/messages.md for the source of each rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .thinking_mode import ThinkingSpec, ThinkingType
from .validate_blocks import (
    PAUSED_TURN_TYPES,
    SERVER_RESULT_TYPES,
    check_block,
    check_cache_control,
    check_system_message_block,
)
from .validate_model import UNKNOWN_MODEL, ModelRules
from .validate_server import check_server_pairing
from .violation import Violation, warning

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")

Out = list[Violation]
Cache = list[tuple[str, Mapping[str, Any]]]


@dataclass
class _Turn:
    """Consecutive messages of one role, as the API combines them."""

    role: str
    first_index: int
    last_index: int
    blocks: list[tuple[str, Mapping[str, Any]]] = field(default_factory=list)
    after_system: bool = False
    """A system message that carries content lies right before this turn."""


@dataclass(frozen=True, slots=True)
class _System:
    """A role "system" message: where it is and whether it carries content."""

    index: int
    carries_content: bool


def final_turn_first_assistant(messages: Sequence[Mapping[str, Any]]) -> int | None:
    """Index of the first assistant message of the unfinished tool loop at the end, if any.

    The API's reading (docs/messages.md): the array ends inside a tool loop when its last
    message is a user message of tool_result blocks only; the loop runs back over
    (assistant, tool_result-only user) pairs. A user message with any other block (a new
    prompt, a reminder) "designates a new assistant loop", so the loop starts after it.
    Expects alternating roles and list content.
    """
    return _loop_start(messages, _results_only, _never)


def results_led_loop_first_assistant(messages: Sequence[Mapping[str, Any]]) -> int | None:
    """Like `final_turn_first_assistant`, but a user message that merely starts with
    tool_results continues the loop (an older, looser reading of the same rule).

    Normalization satisfies both readings (see `close_tool_turn_without_thinking`), so a
    request stays valid whichever one the API applies; the validator checks the documented one.
    """
    return _loop_start(messages, _results_led, _never)


def _loop_start(
    messages: Sequence[Mapping[str, Any]],
    continues: Callable[[Mapping[str, Any]], bool],
    opens: Callable[[int], bool],
) -> int | None:
    """Walk back over (assistant, `continues` user) pairs from the end; an assistant message
    for whose index `opens` is true starts the loop whatever precedes it."""
    j = len(messages) - 1
    first: int | None = None
    while j >= 1 and continues(messages[j]) and messages[j - 1].get("role") == "assistant":
        first = j - 1
        if opens(first):
            break
        j -= 2
    return first


def _never(index: int) -> bool:
    return False


def _user_blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list):
        return []
    return content


def _results_led(message: Mapping[str, Any]) -> bool:
    content = _user_blocks(message)
    return bool(content) and _is_result(content[0])


def _results_only(message: Mapping[str, Any]) -> bool:
    content = _user_blocks(message)
    return bool(content) and all(_is_result(b) for b in content)


def _is_result(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "tool_result"


def validate_messages(
    messages: Any,
    *,
    thinking: ThinkingSpec = None,
    thinking_enabled: bool | None = None,
    cache: Cache | None = None,
    model: ModelRules = UNKNOWN_MODEL,
) -> list[Violation]:
    """Every rule the `messages` array breaks. Cache_control markers found go to `cache`.

    `thinking` is the request's thinking config (or its `ThinkingType`);
    `thinking_enabled` is the legacy boolean form (True means `enabled`).
    """
    mode = ThinkingType.of(thinking if thinking_enabled is None else thinking_enabled)
    if not isinstance(messages, list) or not messages:
        return [Violation("messages.empty", "messages must be a non-empty list", "messages")]
    out: Out = []
    turns, systems = _combine(messages, out, cache if cache is not None else [])
    _check_system_messages(messages, systems, model, out)
    if not turns:
        return out
    if turns[0].role != "user":
        out.append(
            warning(
                "messages.first_role",
                "the first message is not a user message (the API accepts it)",
                "messages[0]",
            )
        )
    _check_tool_ids_unique(turns, out)
    _check_pairing(turns, out)
    check_server_pairing([(t.role, t.blocks) for t in turns], out)
    _check_assistant_turns(turns, out, mode, model)
    if mode is ThinkingType.ENABLED:
        _check_final_turn_thinking(turns, out)
    return out


def _combine(messages: list[Any], out: Out, cache: Cache) -> tuple[list[_Turn], list[_System]]:
    turns: list[_Turn] = []
    systems: list[_System] = []
    last = len(messages) - 1
    previous_role = ""
    system_before = False
    for i, message in enumerate(messages):
        path = f"messages[{i}]"
        role = message.get("role") if isinstance(message, Mapping) else None
        if role == "system":
            systems.append(_System(i, _check_system_content(message, path, out, cache)))
            system_before = system_before or systems[-1].carries_content
            previous_role = "system"
            continue
        if role not in ("user", "assistant"):
            out.append(
                Violation("messages.role", "role must be 'user', 'assistant' or 'system'", path)
            )
            continue
        assert isinstance(message, Mapping)
        role = str(role)
        blocks = _message_blocks(message, path, i == last and role == "assistant", out)
        for block_path, block in blocks:
            check_block(block, block_path, role, out)
            check_cache_control(block, block_path, out, cache)
        if role == previous_role:
            out.append(
                warning(
                    "messages.consecutive_same_role",
                    f"two {role} messages in a row; the API combines them into one turn",
                    path,
                )
            )
        previous_role = role
        if turns and turns[-1].role == role:
            turns[-1].blocks.extend(blocks)
            turns[-1].last_index = i
        else:
            turns.append(_Turn(role, i, i, blocks, system_before))
        system_before = False
    return turns, systems


def _check_system_content(message: Mapping[str, Any], path: str, out: Out, cache: Cache) -> bool:
    """Check a role "system" message's content; True when it carries content (an empty one
    that only sets `output_config` carries none)."""
    content = message.get("content")
    if isinstance(content, str):
        if content.strip():
            return True
        if message.get("output_config") is None:
            out.append(Violation("messages.content_empty", "message content is empty", path))
        return False
    if not isinstance(content, list):
        out.append(Violation("messages.content_type", "content must be a string or a list", path))
        return False
    if not content and message.get("output_config") is None:
        out.append(Violation("messages.content_empty", "message content is empty", path))
    for j, block in enumerate(content):
        block_path = f"{path}.content[{j}]"
        if not isinstance(block, Mapping):
            out.append(Violation("block.invalid", "a content block must be an object", block_path))
            continue
        check_system_message_block(block, block_path, out)
        check_cache_control(block, block_path, out, cache)
    return bool(content)


def _check_system_messages(
    messages: list[Any], systems: list[_System], model: ModelRules, out: Out
) -> None:
    """Mid-conversation system messages: the model must support them, and each group of
    consecutive ones that carries content must follow a user turn (or a paused assistant
    turn) and precede an assistant turn or end the array."""
    groups: list[list[_System]] = []
    for system in systems:
        if groups and groups[-1][-1].index == system.index - 1:
            groups[-1].append(system)
        else:
            groups.append([system])
    for group in groups:
        carriers = [s for s in group if s.carries_content]
        if not carriers:
            continue  # an effort-only message renders nothing and may go anywhere
        path = f"messages[{group[0].index}]"
        if len(carriers) > 1 and model.mid_conversation_system is not False:
            out.append(
                Violation(
                    "system_message.consecutive",
                    "two system messages in a row: each must immediately follow a user "
                    "turn; put their content in one system message",
                    f"messages[{carriers[1].index}]",
                )
            )
        if model.mid_conversation_system is False:
            out.append(
                Violation(
                    "system_message.unsupported_model",
                    "role 'system' is not supported on this model; use the top-level system",
                    path,
                )
            )
            continue
        if model.mid_conversation_system is None:
            out.append(
                warning(
                    "system_message.model_unknown",
                    "mid-conversation system messages work only on the models that support "
                    "them; this model is not known to",
                    path,
                )
            )
        problem = _system_placement_problem(messages, group[0].index, group[-1].index)
        if problem:
            out.append(Violation("system_message.placement", problem, path))


def _system_placement_problem(messages: list[Any], first: int, last: int) -> str:
    if first == 0:
        return "a system message that carries content cannot be the first message"
    before = messages[first - 1]
    role = before.get("role") if isinstance(before, Mapping) else None
    if role == "assistant" and not _ends_with_server_result(before):
        return "a system message must follow a user turn, not an assistant turn"
    if last + 1 < len(messages):
        after = messages[last + 1]
        if not isinstance(after, Mapping) or after.get("role") != "assistant":
            return "a system message must be followed by an assistant turn or end the array"
    return ""


def _ends_with_server_result(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    if not isinstance(content, list) or not content or not isinstance(content[-1], Mapping):
        return False
    return content[-1].get("type") in SERVER_RESULT_TYPES


def _message_blocks(
    message: Mapping[str, Any], path: str, final_assistant: bool, out: Out
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


def _check_tool_ids_unique(turns: list[_Turn], out: Out) -> None:
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


def _check_pairing(turns: list[_Turn], out: Out) -> None:
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


def _check_user_turn(turn: _Turn, expected: dict[str, str], out: Out) -> None:
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
    turns: list[_Turn], out: Out, mode: ThinkingType, model: ModelRules
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
    if final.role == "assistant":
        _check_final_assistant(final, out, mode, model)


def _check_final_assistant(final: _Turn, out: Out, mode: ThinkingType, model: ModelRules) -> None:
    path = f"messages[{final.last_index}]"
    paused = any(block.get("type") in PAUSED_TURN_TYPES for _, block in final.blocks)
    first_type = final.blocks[0][1].get("type") if final.blocks else None
    # One cause, one error: on a model without prefill the thinking rules add nothing.
    if not model.prefill and not paused:
        out.append(
            Violation(
                "assistant.prefill_unsupported",
                "this model does not support assistant message prefill; the conversation "
                "must end with a user message",
                path,
            )
        )
    elif mode.on and first_type not in THINKING_TYPES:
        out.append(
            Violation(
                "thinking.prefill",
                "with thinking on, a final assistant message (prefill) must start "
                "with a thinking block",
                path,
            )
        )
    elif not mode.on and any(b.get("type") in THINKING_TYPES for _, b in final.blocks):
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


def _check_final_turn_thinking(turns: list[_Turn], out: Out) -> None:
    """Extended thinking: the first assistant message of the unfinished tool loop starts
    with thinking. Like a user block beside the results, a system message that carries
    content before an assistant turn starts a new loop there (docs/messages.md)."""
    as_messages = [{"role": t.role, "content": [b for _, b in t.blocks]} for t in turns]
    start = _loop_start(as_messages, _results_only, lambda k: turns[k].after_system)
    if start is None:
        return
    blocks = turns[start].blocks
    if not blocks or blocks[0][1].get("type") not in THINKING_TYPES:
        out.append(
            Violation(
                "thinking.last_assistant_must_start_with_thinking",
                "with extended thinking (type enabled), the assistant message that opened "
                "the unfinished tool loop (the first after the last user message with "
                "anything but tool_results, or after a system message) must start with a "
                "thinking block",
                f"messages[{turns[start].first_index}]",
            )
        )
