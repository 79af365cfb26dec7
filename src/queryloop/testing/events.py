"""A scripted turn rendered as the Messages API renders a response: SSE events or one message.

Pure functions. Tool inputs are serialized with `ensure_ascii=True` (non-ASCII becomes
`\\uXXXX`) and streamed in deliberately awkward chunks: split inside string values and inside
every unicode escape, so a client that parses partial JSON too early breaks visibly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..providers import sse
from .script import (
    Part,
    TextPart,
    ThinkingPart,
    ToolUsePart,
    Turn,
    new_id,
)
from .server_tools import (
    CitedTextPart,
    ServerToolUsePart,
    WebSearchResultPart,
    server_block_json,
    server_tool_usage,
)
from .tokens import estimate_tokens

TEXT_CHUNK = 12
PARTIAL_JSON = "_partial_json"
"""Key of a tool_use block cut by max_tokens: the start of its input JSON."""


@dataclass(frozen=True, slots=True)
class RenderedTurn:
    """A turn fitted to the request's max_tokens, with ids assigned."""

    blocks: tuple[dict[str, Any], ...]
    stop_reason: str
    stop_sequence: str | None
    output_tokens: int


def _block_json(part: Part) -> dict[str, Any]:
    if isinstance(part, ServerToolUsePart | WebSearchResultPart | CitedTextPart):
        return server_block_json(part)
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text}
    if isinstance(part, ToolUsePart):
        return {
            "type": "tool_use",
            "id": part.id or new_id("toolu"),
            "name": part.name,
            "input": dict(part.input),
        }
    if isinstance(part, ThinkingPart):
        return {"type": "thinking", "thinking": part.thinking, "signature": part.signature}
    return {"type": "redacted_thinking", "data": part.data}


def render_turn(turn: Turn, max_tokens: int) -> RenderedTurn:
    """Assign ids and cut the turn at `max_tokens` output tokens (stop_reason max_tokens).

    Truncation keeps whole blocks while they fit and cuts the first block that does not to
    the tokens left: text and thinking are shortened, a tool_use keeps only the start of its
    input JSON (`PARTIAL_JSON`, streamed as is and therefore unparseable, as the real API
    streams a tool call cut by max_tokens).
    """
    blocks: list[dict[str, Any]] = []
    used = 0
    for part in turn.parts:
        block = _block_json(part)
        cost = estimate_tokens(block)
        if used + cost <= max_tokens:
            blocks.append(block)
            used += cost
            continue
        left = max_tokens - used
        if isinstance(part, TextPart | ThinkingPart) and left > 0:
            key = "text" if isinstance(part, TextPart) else "thinking"
            block[key] = block[key][: max(1, (left - 8) * 4)]
            blocks.append(block)
            used += estimate_tokens(block)
        elif isinstance(part, ToolUsePart) and left > 0:
            raw = json.dumps(block["input"], ensure_ascii=True)
            block[PARTIAL_JSON] = raw[: max(1, min(len(raw) - 1, (left - 8) * 4))]
            blocks.append(block)
            used = max_tokens
        return RenderedTurn(tuple(blocks), "max_tokens", None, max(1, min(used, max_tokens)))
    return RenderedTurn(tuple(blocks), turn.effective_stop_reason, turn.stop_sequence, max(1, used))


def message_json(
    rendered: RenderedTurn, *, message_id: str, model: str, usage: Mapping[str, Any]
) -> dict[str, Any]:
    """The non-streaming response body."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [dict(b) for b in rendered.blocks if PARTIAL_JSON not in b],
        "stop_reason": rendered.stop_reason,
        "stop_sequence": rendered.stop_sequence,
        "usage": {
            **usage,
            **server_tool_usage(rendered.blocks),
            "output_tokens": rendered.output_tokens,
            "service_tier": "standard",
        },
    }


def message_start(message_id: str, model: str, usage: Mapping[str, Any]) -> dict[str, Any]:
    """The message_start event (content empty, output_tokens 1, as the API sends)."""
    return sse.message_start(
        message_id, model, {**usage, "output_tokens": 1, "service_tier": "standard"}
    )


def block_events(index: int, block: Mapping[str, Any]) -> list[dict[str, Any]]:
    """content_block_start, its deltas and content_block_stop for one block."""
    kind = block["type"]
    if kind == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        # A cited text block: its citations first, then its text (the API's order).
        deltas = [{"type": "citations_delta", "citation": c} for c in block.get("citations", ())]
        deltas += [{"type": "text_delta", "text": c} for c in _chunks(block["text"], TEXT_CHUNK)]
    elif kind in ("tool_use", "server_tool_use"):
        start = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
        raw = block.get(PARTIAL_JSON) or json.dumps(block["input"], ensure_ascii=True)
        # The API's first input_json_delta is empty; then awkward pieces.
        pieces = ["", *awkward_json_chunks(raw)]
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces]
    elif kind == "thinking":
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": c}
            for c in _chunks(block["thinking"], TEXT_CHUNK)
        ]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    else:
        start = dict(block)
        deltas = []
    events = [{"type": "content_block_start", "index": index, "content_block": start}]
    events.extend({"type": "content_block_delta", "index": index, "delta": d} for d in deltas)
    events.append({"type": "content_block_stop", "index": index})
    return events


def message_end(rendered: RenderedTurn, usage: Mapping[str, Any]) -> list[dict[str, Any]]:
    """message_delta (cumulative usage) and message_stop."""
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": rendered.stop_reason, "stop_sequence": rendered.stop_sequence},
            "usage": {
                **usage,
                **server_tool_usage(rendered.blocks),
                "output_tokens": rendered.output_tokens,
            },
        },
        {"type": "message_stop"},
    ]


def error_event(error_type: str, message: str) -> dict[str, Any]:
    """The SSE `error` event payload."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def _chunks(value: str, size: int) -> list[str]:
    if not value:
        return []
    return [value[i : i + size] for i in range(0, len(value), size)]


_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def awkward_json_chunks(raw: str) -> list[str]:
    """Split JSON text inside every unicode escape, inside every string and every 7 chars."""
    cuts = set(range(7, len(raw), 7))
    cuts.update(m.start() + 3 for m in _ESCAPE.finditer(raw))
    for m in _STRING.finditer(raw):
        if m.end() - m.start() > 3:
            cuts.add((m.start() + m.end()) // 2)
    ordered = sorted(c for c in cuts if 0 < c < len(raw))
    pieces = []
    last = 0
    for cut in ordered:
        pieces.append(raw[last:cut])
        last = cut
    pieces.append(raw[last:])
    return [p for p in pieces if p]
