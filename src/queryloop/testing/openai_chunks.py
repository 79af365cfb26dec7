"""A scripted turn rendered as an OpenAI-compatible chat completion (streamed chunks or whole).

Thinking parts are not part of the chat-completions format and are skipped. Tool calls are
streamed as the OpenAI API streams them: a first delta with id, type and name, then the
arguments string in awkward pieces.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from .events import PARTIAL_JSON, RenderedTurn, awkward_json_chunks
from .script import Fault, new_id

FINISH_REASONS = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
}


def _chunk(
    completion_id: str, model: str, delta: dict[str, Any], finish: str | None
) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }


def openai_usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    """The usage object of a chat completion."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def chat_chunks(
    rendered: RenderedTurn, *, model: str, prompt_tokens: int, include_usage: bool
) -> list[dict[str, Any]]:
    """The `data:` payloads of a streamed chat completion (without the final [DONE])."""
    cid = new_id("chatcmpl")
    out = [_chunk(cid, model, {"role": "assistant", "content": ""}, None)]
    tool_index = 0
    for block in rendered.blocks:
        if block["type"] == "text":
            for i in range(0, len(block["text"]), 12):
                out.append(_chunk(cid, model, {"content": block["text"][i : i + 12]}, None))
        elif block["type"] == "tool_use" and PARTIAL_JSON not in block:
            out.extend(_tool_call_chunks(cid, model, tool_index, block))
            tool_index += 1
    finish = FINISH_REASONS.get(rendered.stop_reason, "stop")
    out.append(_chunk(cid, model, {}, finish))
    if include_usage:
        final = _chunk(cid, model, {}, None)
        final["choices"] = []
        final["usage"] = openai_usage(prompt_tokens, rendered.output_tokens)
        out.append(final)
    return out


def _tool_call_chunks(
    cid: str, model: str, index: int, block: Mapping[str, Any]
) -> list[dict[str, Any]]:
    call_id = "call_" + str(block["id"]).removeprefix("toolu_")
    head = {
        "tool_calls": [
            {
                "index": index,
                "id": call_id,
                "type": "function",
                "function": {"name": block["name"], "arguments": ""},
            }
        ]
    }
    out = [_chunk(cid, model, head, None)]
    for piece in awkward_json_chunks(json.dumps(block["input"], ensure_ascii=True)):
        delta = {"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
        out.append(_chunk(cid, model, delta, None))
    return out


def chat_completion(rendered: RenderedTurn, *, model: str, prompt_tokens: int) -> dict[str, Any]:
    """A non-streamed chat completion."""
    text = "".join(b["text"] for b in rendered.blocks if b["type"] == "text")
    calls = [
        {
            "id": "call_" + str(b["id"]).removeprefix("toolu_"),
            "type": "function",
            "function": {"name": b["name"], "arguments": json.dumps(b["input"])},
        }
        for b in rendered.blocks
        if b["type"] == "tool_use" and PARTIAL_JSON not in b
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": new_id("chatcmpl"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": FINISH_REASONS.get(rendered.stop_reason, "stop"),
            }
        ],
        "usage": openai_usage(prompt_tokens, rendered.output_tokens),
    }


def openai_error(status: int, message: str, *, code: str | None, error_type: str) -> dict[str, Any]:
    """An OpenAI-style error body."""
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def openai_error_type(status: int) -> str:
    """OpenAI's `error.type` for an HTTP status."""
    if status == 429:
        return "rate_limit_exceeded"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def openai_fault_index(chunks: list[dict[str, Any]], fault: Fault | None) -> int | None:
    """The chunk index at which a stream fault fires, mirroring the Anthropic stream's meaning
    of `after_blocks`: a "stream_error" goes out after that many whole blocks (or before the
    finish chunk); a "cut" drops the connection once block
    `after_blocks` started and sent its first piece."""
    if fault is None:
        return None
    starts = _block_starts(chunks)
    finish = next(
        (i for i, c in enumerate(chunks) if any(ch.get("finish_reason") for ch in c["choices"])),
        len(chunks) - 1,
    )
    n = fault.after_blocks
    if n >= len(starts):
        return finish
    if fault.kind == "stream_error":
        # A chat-completions block is whole only once the next one starts: after n > 0 whole
        # blocks the error follows block n's first chunk (block n itself stays incomplete).
        return starts[n] + 1 if n else starts[0]
    return min(starts[n] + 2, finish)


def _block_starts(chunks: list[dict[str, Any]]) -> list[int]:
    starts: list[int] = []
    in_text = False
    for i, chunk in enumerate(chunks):
        delta = chunk["choices"][0]["delta"] if chunk["choices"] else {}
        calls = delta.get("tool_calls") or []
        if delta.get("content") and not in_text:
            starts.append(i)
        if calls and calls[0].get("id"):
            starts.append(i)
        in_text = bool(delta.get("content")) or (in_text and not calls)
    return starts
