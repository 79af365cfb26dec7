"""Normalization passes on drafts and API messages (see normalize.PASSES for the order)."""

from __future__ import annotations

import logging

from .api_types import ApiContentBlock, ApiMessage
from .normalize_context import (
    CONTINUE_TEXT,
    LEADING_PLACEHOLDER_TEXT,
    THINKING_TYPES,
    Draft,
    NormalizeContext,
)
from .pairing import ensure_tool_result_pairing
from .validate import validate_messages
from .validate_blocks import PAUSED_TURN_TYPES

logger = logging.getLogger("queryloop.messages.normalize")


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


def pair_tool_results(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """`ensure_tool_result_pairing` (see pairing.py).

    Needs: ApiMessages without empty messages. Guarantees: tool_use/tool_result paired,
    ids unique, results first, consecutive same roles merged, no empty message.
    """
    return ensure_tool_result_pairing(messages)


def ensure_alternation(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """First message user, roles alternating, and a valid final assistant message.

    Needs: paired messages. Inserts a placeholder user message when the array starts with
    the assistant (not for a `continuation`: its prefix starts the request); merges any
    consecutive same roles; strips trailing whitespace from a final assistant message
    (prefill), dropping blocks that become empty; with thinking on, or on a model without
    prefill (`ctx.prefill` False), appends a short user message after a final assistant
    message (the API accepts prefill with thinking only when it starts with a thinking
    block, models from Claude 4.6 on reject it, and a finished answer is not something to
    continue). A final assistant message that holds server-tool blocks is a paused turn
    (`pause_turn`): it goes back unchanged, for the server to go on with (with thinking on,
    when it starts with its thinking, as such a response does).
    Guarantees: a request-ready array (possibly empty when nothing reached the API).
    """
    out = merge_same_roles(messages)
    if out and out[0]["role"] == "assistant" and not ctx.continuation:
        out.insert(
            0, {"role": "user", "content": [{"type": "text", "text": LEADING_PLACEHOLDER_TEXT}]}
        )
    if out and out[-1]["role"] == "assistant":
        _finish_final_assistant(out, ctx)
    return out


def _finish_final_assistant(out: list[ApiMessage], ctx: NormalizeContext) -> None:
    if is_paused_turn(out[-1]) and _continuable(out[-1], ctx):
        # A server tool's paused turn goes back as it came, to be continued; only trailing
        # whitespace goes, which the API refuses at the end of any final assistant message.
        _trim_trailing_text(out)
        return
    if ctx.thinking_enabled or not ctx.prefill:
        out.append({"role": "user", "content": [{"type": "text", "text": CONTINUE_TEXT}]})
        return
    _trim_trailing_text(out)


def _trim_trailing_text(out: list[ApiMessage]) -> None:
    """Strip the final assistant message's trailing whitespace, dropping text blocks it
    empties (and the message, if nothing is left)."""
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


def _continuable(message: ApiMessage, ctx: NormalizeContext) -> bool:
    """With thinking on, the API continues only a turn that starts with its thinking."""
    content = message["content"]
    return not ctx.thinking_enabled or content[0].get("type") in THINKING_TYPES


def is_paused_turn(message: ApiMessage) -> bool:
    """An assistant message with server-tool blocks: when it ends the array, the request
    continues it (the API's `pause_turn`), so it is neither a prefill nor finished."""
    return any(block.get("type") in PAUSED_TURN_TYPES for block in message["content"])


def check_invariants(messages: list[ApiMessage], ctx: NormalizeContext) -> list[ApiMessage]:
    """Safety net: when debug logging is on, validate the result and log any violation.

    Needs: the final array. The property tests prove there is none, so this costs nothing
    unless `queryloop.messages.normalize` logs at DEBUG level. Guarantees: unchanged output.
    """
    if logger.isEnabledFor(logging.DEBUG):
        for violation in validate_messages(messages, thinking=ctx.thinking):
            if violation.is_error:
                logger.warning(
                    "normalized request breaks %s: %s", violation.rule, violation.message
                )
    return messages


def merge_same_roles(messages: list[ApiMessage]) -> list[ApiMessage]:
    """Consecutive messages of the same role joined into one (new dicts for joined ones)."""
    out: list[ApiMessage] = []
    for message in messages:
        if out and out[-1]["role"] == message["role"]:
            out[-1] = {"role": message["role"], "content": out[-1]["content"] + message["content"]}
        else:
            out.append(message)
    return out
