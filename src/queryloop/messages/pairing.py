"""`ensure_tool_result_pairing`: every tool_use answered right after it, nothing else.

The API rejects a request in which a tool_use has no tool_result at the start of the next
user message, a tool_result has no tool_use in the message before it, or a tool_use id
repeats. Interrupts, crashes, resumes and streaming tool execution all produce such arrays;
this repair makes them valid without losing anything that can be kept.
"""

from __future__ import annotations

from typing import Any

from .api_types import ApiContentBlock, ApiMessage
from .blocks import block_to_api
from .constructors import interrupted_result
from .interruption import Interruption


def synthetic_error_result(tool_use_id: str) -> ApiContentBlock:
    """The is_error tool_result that stands in for a result that never arrived (wire form:
    the `interrupted` flag stays behind)."""
    return block_to_api(interrupted_result(tool_use_id, Interruption.UNPAIRED))


def _first_results(messages: list[ApiMessage]) -> dict[str, ApiContentBlock]:
    """For each tool_use id, the first tool_result with that id found after the tool_use."""
    used: set[str] = set()
    found: dict[str, ApiContentBlock] = {}
    for message in messages:
        if message["role"] == "assistant":
            for block in message["content"]:
                if block.get("type") == "tool_use":
                    used.add(block["id"])
            continue
        for block in message["content"]:
            if block.get("type") == "tool_result":
                tid = block.get("tool_use_id")
                if tid in used and tid not in found:
                    found[tid] = block
    return found


def _dedupe_tool_uses(
    content: list[ApiContentBlock], seen: set[str]
) -> tuple[list[ApiContentBlock], list[str]]:
    """Content without tool_use blocks whose id was seen before (the same list when none
    was), and the new ids in order."""
    ids: list[str] = []
    duplicate = False
    for block in content:
        if block.get("type") == "tool_use":
            tid = block["id"]
            if tid in seen:
                duplicate = True
                continue
            seen.add(tid)
            ids.append(tid)
    if not duplicate:
        return content, ids
    # Keep each new id's first block; drop ids seen in earlier messages and repeats.
    fresh = set(ids)
    kept: list[ApiContentBlock] = []
    for block in content:
        if block.get("type") == "tool_use":
            if block["id"] not in fresh:
                continue
            fresh.discard(block["id"])
        kept.append(block)
    return kept, ids


def ensure_tool_result_pairing(messages: list[ApiMessage]) -> list[ApiMessage]:
    """A copy of `messages` in which tool_use and tool_result blocks pair up exactly.

    * an unanswered tool_use gets a synthetic `is_error` tool_result in the next user
      message (a user message is created when the next message is not one);
    * a tool_result whose tool_use is not in the message right before it moves there when
      its tool_use exists earlier, and is dropped otherwise (orphan);
    * a repeated tool_use id is dropped with its result; the first occurrence wins;
    * the tool_result blocks of a user message come first, in tool_use order;
    * a message left empty disappears, and the neighbours it separated merge.

    Pure (the input is not modified) and idempotent.
    """
    results = _first_results(messages)
    seen: set[str] = set()
    out: list[ApiMessage] = []
    pending: list[str] = []
    for message in messages:
        content = message["content"]
        if message["role"] == "assistant":
            content, ids = _dedupe_tool_uses(content, seen)
            if not content:
                continue
            if pending:
                out.append(_results_message(pending, results, []))
            _append(out, message, "assistant", content)
            pending = ids
            continue
        if pending and _already_paired(content, pending, results):
            out.append(message)  # the common case: nothing to repair, nothing to copy
            pending = []
            continue
        others = content
        if any(b.get("type") == "tool_result" for b in content):
            others = [b for b in content if b.get("type") != "tool_result"]
        if pending:
            out.append(_results_message(pending, results, others))
            pending = []
        elif others:
            _append(out, message, "user", others)
    if pending:
        out.append(_results_message(pending, results, []))
    return out


def _append(out: list[ApiMessage], message: ApiMessage, role: Any, content: list[Any]) -> None:
    """Append (or merge into a same-role predecessor) without touching any input list."""
    if out and out[-1]["role"] == role:
        out[-1] = {"role": role, "content": out[-1]["content"] + content}
    elif content is message["content"]:
        out.append(message)
    else:
        out.append({"role": role, "content": content})


def _results_message(
    ids: list[str], results: dict[str, ApiContentBlock], others: list[Any]
) -> ApiMessage:
    content = [results.get(tid) or synthetic_error_result(tid) for tid in ids]
    content.extend(others)
    return {"role": "user", "content": content}


def _already_paired(
    content: list[ApiContentBlock], ids: list[str], results: dict[str, ApiContentBlock]
) -> bool:
    """True when `content` starts with exactly the chosen results for `ids`, in order."""
    n = len(ids)
    if len(content) < n:
        return False
    for block, tid in zip(content, ids, strict=False):
        if block is not results.get(tid):
            return False
    return all(b.get("type") != "tool_result" for b in content[n:])
