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
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from .api_types import ApiContentBlock, ApiMessage
from .attachments import RenderContext, render_attachment
from .blocks import block_to_api
from .pairing import ensure_tool_result_pairing
from .types import (
    AssistantMessage,
    AttachmentMessage,
    Message,
    SystemMessage,
    SystemSubtype,
    TombstoneMessage,
    UserMessage,
)
from .validate import final_turn_first_assistant, validate_messages

logger = logging.getLogger(__name__)

LEADING_PLACEHOLDER_TEXT = "[Earlier conversation omitted]"
"""The user message inserted when the array would otherwise start with the assistant."""

CONTINUE_TEXT = "Continue."
"""The user message appended after a final assistant message when thinking is on (no prefill)."""

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})

Draft: TypeAlias = tuple[str, list[ApiContentBlock], str]
"""(role, wire blocks, API message id or "") — one message between rendering and merging."""


@dataclass(frozen=True, slots=True)
class NormalizeContext:
    """What the passes know about the request: tool names and whether thinking is on."""

    tool_names: frozenset[str] = frozenset()
    thinking_enabled: bool = True


# -- passes on internal messages --------------------------------------------------------


def reorder_attachments(messages: list[Any], ctx: NormalizeContext) -> list[Any]:
    """Bubble attachments up to just after the nearest stop point above them.

    Needs: the raw internal array. Stop points are assistant messages and user messages
    whose content starts with a tool_result; attachments with none above go to the top.
    Guarantees: same messages, attachments moved, relative order otherwise unchanged. O(N):
    one backwards scan pushing onto a list, then a single reverse.
    """
    result: list[Any] = []
    pending: list[Any] = []
    for message in reversed(messages):
        if isinstance(message, AttachmentMessage):
            pending.append(message)
            continue
        if pending and _is_stop_point(message):
            result.extend(pending)
            pending.clear()
        result.append(message)
    result.extend(pending)
    result.reverse()
    return result


def _is_stop_point(message: Message) -> bool:
    if isinstance(message, AssistantMessage):
        return True
    if isinstance(message, UserMessage) and not isinstance(message.content, str):
        return bool(message.content) and message.content[0].type == "tool_result"
    return False


def drop_non_api_messages(messages: list[Any], ctx: NormalizeContext) -> list[Any]:
    """Remove everything that never reaches the API.

    Needs: attachments already placed (tombstones may target any message, so this runs
    after reordering, which never drops anything). Removes progress, tombstones and every
    message a tombstone targets, tool_use_summary, virtual and API-error messages, and
    system messages except `local_command`, which becomes a meta user message with
    `<local-command-stdout>` text.
    Guarantees: only user, assistant and attachment messages remain.
    """
    voided = {m.target_uuid for m in messages if isinstance(m, TombstoneMessage)}
    kept: list[Any] = []
    for message in messages:
        if message.uuid in voided:
            continue
        if isinstance(message, UserMessage):
            if not message.is_virtual:
                kept.append(message)
        elif isinstance(message, AssistantMessage):
            if not (message.is_virtual or message.is_api_error):
                kept.append(message)
        elif isinstance(message, AttachmentMessage):
            kept.append(message)
        elif isinstance(message, SystemMessage) and message.subtype is SystemSubtype.LOCAL_COMMAND:
            kept.append(_local_command_as_user(message))
    return kept


def _local_command_as_user(message: SystemMessage) -> UserMessage:
    text = f"<local-command-stdout>{message.content}</local-command-stdout>"
    return UserMessage(content=text, is_meta=True, uuid=message.uuid, timestamp=message.timestamp)


def render_attachments(messages: list[Any], ctx: NormalizeContext) -> list[Draft]:
    """Turn every message into a `Draft` of wire blocks; render attachments via the registry.

    Needs: only user, assistant and attachment messages. Reminder text becomes a user
    draft; a synthetic tool call becomes an assistant draft (tool_use) and a user draft
    (tool_result), so alternation holds once consecutive roles merge.
    Guarantees: drafts only, wire blocks from `block_to_api`, string user content as one
    text block, assistant drafts carry their API message id.
    """
    render_ctx = RenderContext(tool_names=ctx.tool_names, thinking_enabled=ctx.thinking_enabled)
    drafts: list[Draft] = []
    append = drafts.append
    for message in messages:
        if isinstance(message, AssistantMessage):
            append(("assistant", [block_to_api(b) for b in message.content], message.message_id))
        elif isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                append(("user", [{"type": "text", "text": content}], ""))
            else:
                append(("user", [block_to_api(b) for b in content], ""))
        else:
            rendered = render_attachment(message, render_ctx)
            if rendered is None:
                continue
            if rendered.text is not None:
                append(("user", [{"type": "text", "text": rendered.text}], ""))
            if rendered.tool_use is not None and rendered.tool_result is not None:
                append(("assistant", [block_to_api(rendered.tool_use)], ""))
                append(("user", [block_to_api(rendered.tool_result)], ""))
    return drafts


def merge_messages(drafts: list[Draft], ctx: NormalizeContext) -> list[ApiMessage]:
    """Merge split assistant responses and consecutive same-role messages into ApiMessages.

    Needs: drafts. An assistant draft joins the last assistant message when they share a
    non-empty API message id and only tool_result-only user messages lie between (streaming
    tool execution lands results between the blocks of one response); those results then
    form one user message after it. Any two consecutive drafts of the same role merge.
    Guarantees: ApiMessage dicts with fresh content lists, roles alternating.
    """
    out: list[ApiMessage] = []
    last_id = ""
    last_index = -1
    results_only_since = True
    for role, blocks, message_id in drafts:
        if role == "assistant":
            if message_id and message_id == last_id and results_only_since:
                _join_split_response(out, last_index, blocks)
            elif out and out[-1]["role"] == "assistant":
                out[-1]["content"].extend(blocks)
                last_index = len(out) - 1
            else:
                # Drafts are this module's own lists: reuse them instead of copying.
                out.append({"role": "assistant", "content": blocks})
                last_index = len(out) - 1
            last_id, results_only_since = message_id, True
            continue
        if results_only_since and last_id:
            results_only_since = all(b.get("type") == "tool_result" for b in blocks)
        if out and out[-1]["role"] == "user":
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": "user", "content": blocks})
    return out


def _join_split_response(out: list[ApiMessage], index: int, blocks: list[ApiContentBlock]) -> None:
    """Append `blocks` to out[index] and fold the result messages after it into one."""
    out[index]["content"].extend(blocks)
    if index == len(out) - 1:
        return
    results: list[ApiContentBlock] = []
    for message in out[index + 1 :]:
        results.extend(message["content"])
    del out[index + 1 :]
    out.append({"role": "user", "content": results})


# -- passes on API messages ------------------------------------------------------------


def tool_results_first(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """Move tool_result blocks to the front of each user message (stable).

    Needs: merged ApiMessages. Guarantees: in every user message no tool_result follows
    another kind of block.
    """
    out: list[ApiMessage] = []
    for message in messages:
        content = message["content"]
        if message["role"] == "user" and not _results_lead(content):
            results = [b for b in content if b.get("type") == "tool_result"]
            rest = [b for b in content if b.get("type") != "tool_result"]
            message = {"role": "user", "content": results + rest}
        out.append(message)
    return out


def _results_lead(content: list[ApiContentBlock]) -> bool:
    """True when no tool_result follows a non-tool_result block."""
    other_seen = False
    for block in content:
        if block.get("type") == "tool_result":
            if other_seen:
                return False
        else:
            other_seen = True
    return True


def drop_empty_text(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """Drop empty and whitespace-only text blocks, then messages left empty.

    Needs: ApiMessages. Also cleans text inside tool_result content lists (the API rejects
    them there too). Guarantees: every text block has non-whitespace text; no message has
    empty content (roles may now repeat; later passes merge them).
    """
    out: list[ApiMessage] = []
    for message in messages:
        content = message["content"]
        if _needs_text_cleaning(content):
            content = [_clean_result(b) for b in content if not _is_blank_text(b)]
            message = {"role": message["role"], "content": content}
        if content:
            out.append(message)
    return out


def _is_blank_text(block: ApiContentBlock) -> bool:
    return block.get("type") == "text" and not str(block.get("text", "")).strip()


def _needs_text_cleaning(content: list[ApiContentBlock]) -> bool:
    # A plain loop: this runs for every block of every message (hot in the benchmark).
    for block in content:
        kind = block.get("type")
        if kind == "text":
            if not str(block.get("text", "")).strip():
                return True
        elif kind == "tool_result":
            inner = block.get("content")
            if isinstance(inner, list) and any(_is_blank_text(b) for b in inner):
                return True
    return False


def _clean_result(block: ApiContentBlock) -> ApiContentBlock:
    inner = block.get("content")
    if block.get("type") != "tool_result" or not isinstance(inner, list):
        return block
    return {**block, "content": [b for b in inner if not _is_blank_text(b)]}


def strip_thinking(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """Remove thinking blocks the request cannot carry.

    Needs: ApiMessages. With thinking off every thinking and redacted_thinking block goes
    (the API rejects them in a final assistant message, and earlier ones would only be
    dropped by it). With thinking on, unsigned thinking blocks go (the API verifies
    signatures; an interrupted stream leaves none), and so do thinking blocks that would
    end an assistant message (the API rejects a final thinking block).
    Guarantees: no message is left empty; roles may repeat where one vanished.
    """
    out: list[ApiMessage] = []
    for message in messages:
        content = message["content"]
        if message["role"] == "assistant" and any(b.get("type") in THINKING_TYPES for b in content):
            content = _carryable(content, ctx.thinking_enabled)
            if not content:
                continue
            message = {"role": "assistant", "content": content}
        out.append(message)
    return out


def _carryable(content: list[ApiContentBlock], thinking_enabled: bool) -> list[ApiContentBlock]:
    if not thinking_enabled:
        return [b for b in content if b.get("type") not in THINKING_TYPES]
    kept = [b for b in content if b.get("type") != "thinking" or b.get("signature")]
    return _without_trailing_thinking(kept)


def _without_trailing_thinking(content: list[ApiContentBlock]) -> list[ApiContentBlock]:
    end = len(content)
    while end and content[end - 1].get("type") in THINKING_TYPES:
        end -= 1
    return content[:end]


def pair_tool_results(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """`ensure_tool_result_pairing` (see pairing.py).

    Needs: ApiMessages without empty messages. Guarantees: tool_use/tool_result paired,
    ids unique, results first, consecutive same roles merged, no empty message.
    """
    return ensure_tool_result_pairing(messages)


def drop_trailing_thinking(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """Drop thinking blocks that end an assistant message, and messages left empty.

    Needs: paired messages. Pairing may remove a duplicate tool_use and leave a thinking
    block last, which the API rejects. A message emptied here held no tool_use, so
    pairing still holds. Guarantees: no assistant message ends with thinking; consecutive
    same roles merged again.
    """
    out: list[ApiMessage] = []
    for message in messages:
        content = message["content"]
        if message["role"] == "assistant" and content[-1].get("type") in THINKING_TYPES:
            content = _without_trailing_thinking(content)
            if not content:
                continue
            message = {"role": "assistant", "content": content}
        out.append(message)
    return _merge_same_roles(out)


def _merge_same_roles(messages: list[ApiMessage]) -> list[ApiMessage]:
    out: list[ApiMessage] = []
    for message in messages:
        if out and out[-1]["role"] == message["role"]:
            out[-1] = {"role": message["role"], "content": out[-1]["content"] + message["content"]}
        else:
            out.append(message)
    return out


def close_tool_turn_without_thinking(
    messages: list[ApiMessage], ctx: NormalizeContext
) -> list[ApiMessage]:
    """With thinking on, make an unfinished tool loop that lacks its thinking block valid.

    Needs: paired messages. When the array ends inside a tool loop (its last message is a
    tool_result-led user message), the API requires the loop's first assistant message to
    start with a thinking block. If it does not (the thinking was unsigned, or thinking was
    switched on mid-turn) no valid request can keep those blocks as tool calls, so that
    turn's tool_use and tool_result blocks are rewritten as plain text.
    Guarantees: the thinking requirement for the final turn holds; pairing still holds.
    """
    if not ctx.thinking_enabled:
        return messages
    start = final_turn_first_assistant(messages)
    if start is None:
        return messages
    first = messages[start]["content"]
    if first and first[0].get("type") in THINKING_TYPES:
        return messages
    names = {
        b["id"]: b.get("name", "tool")
        for m in messages[start:]
        for b in m["content"]
        if b.get("type") == "tool_use"
    }
    tail: list[ApiMessage] = [
        {"role": m["role"], "content": [x for b in m["content"] for x in _as_text(b, names)]}
        for m in messages[start:]
    ]
    return messages[:start] + tail


def _as_text(block: ApiContentBlock, names: Mapping[str, str]) -> list[ApiContentBlock]:
    kind = block.get("type")
    if kind == "tool_use":
        args = json.dumps(block.get("input", {}), ensure_ascii=False, sort_keys=True)
        return [{"type": "text", "text": f"[Called tool {block.get('name')} with input {args}]"}]
    if kind != "tool_result":
        return [block]
    name = names.get(block.get("tool_use_id", ""), "tool")
    status = "error" if block.get("is_error") else "result"
    inner = block.get("content", "")
    parts = [{"type": "text", "text": inner}] if isinstance(inner, str) else list(inner)
    texts = [p for p in parts if p.get("type") == "text" and str(p.get("text", "")).strip()]
    media = [p for p in parts if p.get("type") != "text"]
    body = "\n".join(str(p["text"]) for p in texts) or "(no output)"
    return [{"type": "text", "text": f"[Tool {name} {status}]\n{body}"}, *media]


def ensure_alternation(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """First message user, roles alternating, and a valid final assistant message.

    Needs: paired messages. Inserts a placeholder user message when the array starts with
    the assistant; merges any consecutive same roles; strips trailing whitespace from a
    final assistant message (prefill), dropping blocks that become empty; with thinking on,
    appends a short user message after a final assistant message, because the API does not
    accept prefill while thinking is enabled.
    Guarantees: a request-ready array (possibly empty when nothing reached the API).
    """
    out = _merge_same_roles(messages)
    if out and out[0]["role"] == "assistant":
        out.insert(
            0, {"role": "user", "content": [{"type": "text", "text": LEADING_PLACEHOLDER_TEXT}]}
        )
    if out and out[-1]["role"] == "assistant":
        _finish_final_assistant(out, ctx)
    return out


def _finish_final_assistant(out: list[ApiMessage], ctx: NormalizeContext) -> None:
    if ctx.thinking_enabled:
        out.append({"role": "user", "content": [{"type": "text", "text": CONTINUE_TEXT}]})
        return
    content = list(out[-1]["content"])
    while content and content[-1].get("type") == "text":
        text = str(content[-1].get("text", "")).rstrip()
        if text:
            content[-1] = {**content[-1], "text": text}
            break
        content.pop()
    if content:
        out[-1] = {"role": "assistant", "content": content}
    else:
        out.pop()


def check_invariants(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """Safety net: when debug logging is on, validate the result and log any violation.

    Needs: the final array. The property tests prove there is none, so this costs nothing
    unless `queryloop.messages.normalize` logs at DEBUG level. Guarantees: unchanged output.
    """
    if logger.isEnabledFor(logging.DEBUG):
        for violation in validate_messages(messages, thinking_enabled=ctx.thinking_enabled):
            logger.warning("normalized request breaks %s: %s", violation.rule, violation.message)
    return messages


Pass: TypeAlias = Callable[[Any, NormalizeContext], Any]

PASSES: tuple[tuple[str, Pass], ...] = (
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
    thinking_enabled: bool = True,
) -> list[ApiMessage]:
    """The internal array as the strict user/assistant messages the Messages API accepts.

    `tools` are the request's tool definitions (only their names matter here: a file
    attachment becomes a synthetic Read call only when a "Read" tool is defined).
    `thinking_enabled` must match the request's `thinking` parameter. The input is not
    modified; the same input always gives the same output, byte for byte.
    """
    ctx = NormalizeContext(
        tool_names=frozenset(str(t.get("name", "")) for t in tools or ()),
        thinking_enabled=thinking_enabled,
    )
    state: Any = list(messages)
    # The passes allocate many small dicts and lists but never a reference cycle, so the
    # cyclic garbage collector has nothing to find; pausing it keeps the time linear (its
    # full collections would rescan the whole, long-lived history again and again).
    collecting = gc.isenabled()
    gc.disable()
    try:
        for _name, run in PASSES:
            state = run(state, ctx)
    finally:
        if collecting:
            gc.enable()
    result: list[ApiMessage] = state
    return result
