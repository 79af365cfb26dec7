"""`ensure_tool_result_pairing`: every tool_use answered right after it, nothing else.

The API rejects a request in which a tool_use has no tool_result at the start of the next
user message, a tool_result has no tool_use in the message before it, or a tool_use id
repeats. Interrupts, crashes, resumes and streaming tool execution all produce such arrays;
this repair makes them valid without losing anything that can be kept.
"""

from __future__ import annotations

from typing import Any

from .api_types import ApiContentBlock, ApiMessage

INTERRUPTED_TOOL_RESULT = "Tool call was interrupted before it produced a result."


def synthetic_error_result(tool_use_id: str) -> ApiContentBlock:
    """The is_error tool_result that stands in for a result that never arrived."""
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": INTERRUPTED_TOOL_RESULT,
        "is_error": True,
    }


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
    """Content without tool_use blocks whose id was seen before; the new ids, in order."""
    kept: list[ApiContentBlock] = []
    ids: list[str] = []
    for block in content:
        if block.get("type") == "tool_use":
            tid = block["id"]
            if tid in seen:
                continue
            seen.add(tid)
            ids.append(tid)
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
        if message["role"] == "assistant":
            content, ids = _dedupe_tool_uses(message["content"], seen)
            if not content:
                continue
            if pending:
                out.append(_results_message(pending, results, []))
            if out and out[-1]["role"] == "assistant":
                out[-1]["content"].extend(content)
            else:
                out.append({"role": "assistant", "content": content})
            pending = ids
            continue
        others = [b for b in message["content"] if b.get("type") != "tool_result"]
        if pending:
            out.append(_results_message(pending, results, others))
            pending = []
        elif out and out[-1]["role"] == "user":
            out[-1]["content"].extend(others)
        elif others:
            out.append({"role": "user", "content": others})
    if pending:
        out.append(_results_message(pending, results, []))
    return out


def _results_message(
    ids: list[str], results: dict[str, ApiContentBlock], others: list[Any]
) -> ApiMessage:
    content = [results.get(tid) or synthetic_error_result(tid) for tid in ids]
    content.extend(others)
    return {"role": "user", "content": content}
