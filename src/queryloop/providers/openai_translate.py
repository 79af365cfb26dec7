"""Pure translation between queryloop's Anthropic-shaped requests and OpenAI chat completions.

Requests: system blocks become one system message; tool_result blocks become `tool` messages
(placed first, right after the assistant message that called them); images become
`image_url` parts (data URLs for base64 sources); assistant tool_use blocks become
`tool_calls`; thinking blocks are dropped (chat completions cannot carry them).

Responses: `OpenAIChunkAssembler` turns streamed chunk dicts into canonical events. A tool call
is complete when the next one starts or when the choice finishes, since OpenAI-compatible
servers stream tool calls one after another.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..messages.blocks import AssistantContentBlock, TextBlock, ThinkingBlock, ToolUseBlock
from ..messages.usage import Usage
from .base import (
    BlockComplete,
    BlockStart,
    InputJsonDelta,
    MessageComplete,
    MessageDelta,
    MessageStart,
    ModelRequest,
    ModelResponse,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
)
from .errors import StreamInterruptedError

STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


def to_openai_body(request: ModelRequest) -> dict[str, Any]:
    """The chat.completions request body for `request` (streaming, with usage)."""
    messages: list[dict[str, Any]] = []
    system = "\n\n".join(block["text"] for block in request.system if block.get("text"))
    if system:
        messages.append({"role": "system", "content": system})
    for message in request.messages:
        if message["role"] == "assistant":
            messages.append(_assistant(message["content"]))
        else:
            messages.extend(_user(message["content"]))
    body: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "max_tokens": request.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        body["tools"] = [_tool(tool) for tool in request.tools]
    if request.tool_choice is not None:
        body["tool_choice"] = _tool_choice(request.tool_choice)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.stop_sequences:
        body["stop"] = list(request.stop_sequences)
    body.update(request.extra_body)
    return body


def _tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
        },
    }


def _tool_choice(choice: Mapping[str, Any]) -> Any:
    kind = choice.get("type")
    if kind == "tool":
        return {"type": "function", "function": {"name": choice["name"]}}
    return {"any": "required", "none": "none"}.get(str(kind), "auto")


def _assistant(content: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    text = "".join(str(b.get("text", "")) for b in content if b.get("type") == "text")
    calls = [
        {
            "id": b["id"],
            "type": "function",
            "function": {"name": b["name"], "arguments": json.dumps(b.get("input") or {})},
        }
        for b in content
        if b.get("type") == "tool_use"
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return message


def _user(content: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type")
        if kind == "tool_result":
            text, images = _tool_result(block)
            out.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": text})
            parts.extend(images)
        elif kind == "image":
            parts.append(_image(block))
        elif kind == "document":
            parts.append({"type": "text", "text": _document_text(block)})
        elif kind == "text":
            parts.append({"type": "text", "text": str(block.get("text", ""))})
    if parts:
        if all(p["type"] == "text" for p in parts):
            # Plain strings suit local servers that reject content arrays.
            out.append({"role": "user", "content": "\n\n".join(p["text"] for p in parts)})
        else:
            out.append({"role": "user", "content": parts})
    return out


def _tool_result(block: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    raw = block.get("content", "")
    images: list[dict[str, Any]] = []
    if isinstance(raw, str):
        text = raw
    else:
        texts = []
        for part in raw:
            if part.get("type") == "image":
                images.append(_image(part))
            elif part.get("type") == "text":
                texts.append(str(part.get("text", "")))
        text = "\n".join(texts)
    if block.get("is_error"):
        text = f"Error: {text}"
    return text, images


def _image(block: Mapping[str, Any]) -> dict[str, Any]:
    source = block.get("source") or {}
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    else:
        url = str(source.get("url", ""))
    return {"type": "image_url", "image_url": {"url": url}}


def _document_text(block: Mapping[str, Any]) -> str:
    source = block.get("source") or {}
    if source.get("type") == "text":
        return str(source.get("data", ""))
    title = block.get("title") or "document"
    return f"[{title}: a {source.get('media_type', 'binary')} document this model cannot read]"


@dataclass(slots=True)
class _Call:
    index: int
    id: str
    name: str
    arguments: list[str] = field(default_factory=list)


_call_ids = itertools.count(1)


class OpenAIChunkAssembler:
    """Streamed chat-completion chunks (dicts) in, canonical events out. Pure."""

    def __init__(self) -> None:
        self.message_id: str | None = None
        self.model = ""
        self._next_index = 0
        self._text_index: int | None = None
        self._text: list[str] = []
        self._thinking_index: int | None = None
        self._thinking: list[str] = []
        self._calls: dict[int, _Call] = {}  # OpenAI tool-call index -> open call
        self._done: dict[int, AssistantContentBlock] = {}
        self._finish: str | None = None
        self._usage = Usage()

    @property
    def completed_blocks(self) -> tuple[AssistantContentBlock, ...]:
        """Blocks that are whole, in order."""
        return tuple(self._done[i] for i in sorted(self._done))

    @property
    def finished(self) -> bool:
        """True once a finish_reason arrived."""
        return self._finish is not None

    def feed(self, chunk: Mapping[str, Any]) -> list[StreamEvent]:
        """Consume one chunk."""
        out: list[StreamEvent] = []
        if self.message_id is None:
            self.message_id = str(chunk.get("id") or "chatcmpl")
            self.model = str(chunk.get("model") or "")
            out.append(MessageStart(self.message_id, self.model, Usage()))
        if chunk.get("usage"):
            self._usage = _usage(chunk["usage"])
        for choice in chunk.get("choices") or []:
            out.extend(self._delta(choice.get("delta") or {}))
            if choice.get("finish_reason"):
                self._finish = str(choice["finish_reason"])
                out.extend(self._close_all())
        return out

    def _delta(self, delta: Mapping[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        # Local reasoning models (vLLM, Ollama, DeepSeek-style servers) stream their thinking
        # as `reasoning_content` or `reasoning`; it becomes an unsigned thinking block.
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if reasoning:
            if self._thinking_index is None:
                self._thinking_index = self._take_index()
                out.append(BlockStart(self._thinking_index, "thinking"))
            self._thinking.append(str(reasoning))
            out.append(ThinkingDelta(self._thinking_index, str(reasoning)))
        content = delta.get("content")
        if content:
            out.extend(self._close_thinking())
            if self._text_index is None:
                self._text_index = self._take_index()
                out.append(BlockStart(self._text_index, "text"))
            self._text.append(str(content))
            out.append(TextDelta(self._text_index, str(content)))
        for call in delta.get("tool_calls") or []:
            out.extend(self._tool_delta(call))
        return out

    def _tool_delta(self, call: Mapping[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        key = int(call.get("index") or 0)
        function = call.get("function") or {}
        open_call = self._calls.get(key)
        if open_call is None:
            # A new call: everything before it is complete.
            out.extend(self._close_all())
            call_id = str(call.get("id") or f"call_ql{next(_call_ids)}")
            open_call = _Call(self._take_index(), call_id, str(function.get("name") or ""))
            self._calls[key] = open_call
            out.append(BlockStart(open_call.index, "tool_use", call_id, open_call.name))
        elif function.get("name") and not open_call.name:
            open_call.name = str(function["name"])
        arguments = function.get("arguments")
        if arguments:
            open_call.arguments.append(str(arguments))
            out.append(InputJsonDelta(open_call.index, str(arguments)))
        return out

    def _take_index(self) -> int:
        index = self._next_index
        self._next_index += 1
        return index

    def _close_thinking(self) -> list[StreamEvent]:
        if self._thinking_index is None:
            return []
        block = ThinkingBlock("".join(self._thinking))
        index, self._thinking_index, self._thinking = self._thinking_index, None, []
        self._done[index] = block
        return [BlockComplete(index, block)]

    def _close_all(self) -> list[StreamEvent]:
        out = self._close_thinking()
        if self._text_index is not None:
            block = TextBlock("".join(self._text))
            self._done[self._text_index] = block
            out.append(BlockComplete(self._text_index, block))
            self._text_index, self._text = None, []
        for call in sorted(self._calls.values(), key=lambda c: c.index):
            if call.index in self._done:
                continue
            tool = ToolUseBlock(call.id, call.name, _parse_arguments(call))
            self._done[call.index] = tool
            out.append(BlockComplete(call.index, tool))
        return out

    def finish(self) -> list[StreamEvent]:
        """The closing MessageDelta and MessageComplete; raises if no finish_reason came."""
        if self._finish is None:
            raise self.interrupted("the stream ended before a finish_reason")
        stop = STOP_REASONS.get(self._finish, self._finish)
        if stop == "end_turn" and any(isinstance(b, ToolUseBlock) for b in self._done.values()):
            stop = "tool_use"  # some local servers say "stop" after tool calls
        response = ModelResponse(
            id=self.message_id or "",
            model=self.model,
            content=self.completed_blocks,
            stop_reason=stop,
            usage=self._usage,
        )
        return [MessageDelta(stop, self._usage), MessageComplete(response)]

    @property
    def ended(self) -> bool:
        """True once a finish_reason arrived (the stream driver's name for `finished`)."""
        return self._finish is not None

    def end(self) -> list[StreamEvent]:
        """The stream driver's name for `finish()`."""
        return self.finish()

    def interrupted(self, reason: str) -> StreamInterruptedError:
        """A `StreamInterruptedError` with what completed so far."""
        return StreamInterruptedError(
            f"{reason}; {len(self._done)} block(s) had completed",
            completed_blocks=self.completed_blocks,
            message_id=self.message_id,
            usage=self._usage,
        )


def _parse_arguments(call: _Call) -> dict[str, Any]:
    raw = "".join(call.arguments)
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise StreamInterruptedError(
            f"tool call {call.name!r} ended with invalid JSON arguments: {exc.msg} in {raw[:200]!r}"
        ) from exc
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def _usage(raw: Mapping[str, Any]) -> Usage:
    prompt = int(raw.get("prompt_tokens") or 0)
    details = raw.get("prompt_tokens_details") or {}
    cached = int(details.get("cached_tokens") or 0) if isinstance(details, Mapping) else 0
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=int(raw.get("completion_tokens") or 0),
        cache_read_input_tokens=cached,
    )
