"""A pure assembler: raw Anthropic stream events (dicts) in, canonical events out.

No I/O and no event loop: `feed()` takes one decoded SSE payload (`{"type": "message_start",
...}`) and returns the canonical events it produces; `finish()` checks the message ended
properly. Partial tool-input JSON is accumulated per block and parsed once, when the block's
`content_block_stop` arrives, so a `BlockComplete` for a tool_use carries the whole input the
moment the block is done (streaming tool execution starts tools from it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..messages.blocks import (
    AssistantContentBlock,
    RedactedThinkingBlock,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    web_search_result_from_api,
)
from ..messages.usage import Usage
from .base import (
    BlockComplete,
    BlockStart,
    InputJsonDelta,
    MessageComplete,
    MessageDelta,
    MessageStart,
    ModelResponse,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
)
from .errors import StreamInterruptedError

_KNOWN_BLOCKS = frozenset(
    {
        "text",
        "tool_use",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
    }
)
_CALLS = frozenset({"tool_use", "server_tool_use"})
"""Blocks whose input arrives as `input_json_delta`s."""


@dataclass(slots=True)
class _OpenBlock:
    """A block that started and has not stopped yet."""

    block_type: str
    parts: list[str] = field(default_factory=list)
    signature: str = ""
    tool_use_id: str = ""
    tool_name: str = ""
    data: str = ""
    citations: list[Mapping[str, Any]] = field(default_factory=list)
    whole: Mapping[str, Any] | None = None
    """A block the API sends whole in its `content_block_start` (a web search's result)."""


class StreamAssembler:
    """Turns the Messages API's raw stream events into canonical `StreamEvent`s.

    Web search's server-tool blocks (`server_tool_use`, whose input streams like a tool_use's,
    and `web_search_tool_result`, sent whole at its start) and text citations
    (`citations_delta`) are kept, so a response can be sent back unchanged. Unknown event
    types and other block types are ignored, as the SDKs do, so a newer API never breaks an
    older queryloop.
    """

    def __init__(self) -> None:
        self.message_id: str | None = None
        self.model: str = ""
        self._usage: dict[str, Any] = {}
        self._open: dict[int, _OpenBlock] = {}
        self._done: dict[int, AssistantContentBlock] = {}
        self._truncated: dict[int, StreamInterruptedError] = {}
        self._stop_reason: str | None = None
        self._stop_sequence: str | None = None
        self.response: ModelResponse | None = None

    # -- state a caller may read ------------------------------------------------------------

    @property
    def started(self) -> bool:
        """True once message_start arrived."""
        return self.message_id is not None

    @property
    def completed(self) -> bool:
        """True once message_stop arrived."""
        return self.response is not None

    @property
    def usage(self) -> Usage:
        """Usage so far: message_start's, updated by every message_delta."""
        return Usage.from_dict(self._usage)

    @property
    def completed_blocks(self) -> tuple[AssistantContentBlock, ...]:
        """The blocks that arrived whole, in index order."""
        return tuple(self._done[i] for i in sorted(self._done))

    # -- feeding ------------------------------------------------------------------------------

    def feed(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        """Consume one raw event; return the canonical events it produced.

        An `error` event raises `StreamInterruptedError` carrying the completed blocks.
        """
        kind = event.get("type")
        handler = _HANDLERS.get(str(kind))
        if handler is None:
            return []
        return handler(self, event)

    def finish(self) -> ModelResponse:
        """The whole response; raises `StreamInterruptedError` if message_stop never came."""
        if self.response is None:
            raise self.interrupted("the stream ended before message_stop")
        return self.response

    @property
    def ended(self) -> bool:
        """True once message_stop arrived (the stream driver's name for `completed`)."""
        return self.response is not None

    def end(self) -> list[StreamEvent]:
        """No closing events (message_stop already produced `MessageComplete`); raises
        `StreamInterruptedError` if message_stop never came."""
        self.finish()
        return []

    def interrupted(self, reason: str) -> StreamInterruptedError:
        """A `StreamInterruptedError` describing the state reached so far."""
        open_note = ""
        if self._open:
            kinds = ", ".join(f"{i}:{b.block_type}" for i, b in sorted(self._open.items()))
            open_note = f" (incomplete blocks: {kinds})"
        return StreamInterruptedError(
            f"{reason}{open_note}; {len(self._done)} block(s) had completed",
            completed_blocks=self.completed_blocks,
            message_id=self.message_id,
            usage=self.usage,
        )

    # -- handlers -----------------------------------------------------------------------------

    def _message_start(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        message = event.get("message") or {}
        self.message_id = str(message.get("id") or "")
        self.model = str(message.get("model") or "")
        self._merge_usage(message.get("usage"))
        return [MessageStart(message_id=self.message_id, model=self.model, usage=self.usage)]

    def _block_start(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        index = int(event["index"])
        raw = event.get("content_block") or {}
        kind = str(raw.get("type"))
        if kind not in _KNOWN_BLOCKS:
            return []
        block = _OpenBlock(block_type=kind)
        out: list[StreamEvent] = []
        if kind == "web_search_tool_result":
            block.whole = raw
        elif kind in _CALLS:
            block.tool_use_id = str(raw.get("id", ""))
            block.tool_name = str(raw.get("name", ""))
            initial = raw.get("input")
            if initial:
                # Some gateways send the whole input here instead of as deltas.
                block.parts.append(json.dumps(initial))
        elif kind == "redacted_thinking":
            block.data = str(raw.get("data", ""))
        elif kind == "thinking":
            block.signature = str(raw.get("signature") or "")
            if raw.get("thinking"):
                block.parts.append(str(raw["thinking"]))
        elif raw.get("text"):
            block.parts.append(str(raw["text"]))
        self._open[index] = block
        out.append(
            BlockStart(
                index=index,
                block_type=kind,
                tool_use_id=block.tool_use_id or None,
                tool_name=block.tool_name or None,
            )
        )
        return out

    def _block_delta(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        index = int(event["index"])
        block = self._open.get(index)
        delta = event.get("delta") or {}
        if block is None:
            return []
        kind = delta.get("type")
        if kind == "text_delta":
            block.parts.append(str(delta.get("text", "")))
            return [TextDelta(index=index, text=str(delta.get("text", "")))]
        if kind == "thinking_delta":
            block.parts.append(str(delta.get("thinking", "")))
            return [ThinkingDelta(index=index, thinking=str(delta.get("thinking", "")))]
        if kind == "signature_delta":
            block.signature += str(delta.get("signature", ""))
            return []
        if kind == "citations_delta" and isinstance(delta.get("citation"), Mapping):
            block.citations.append(dict(delta["citation"]))
            return []
        if kind == "input_json_delta":
            partial = str(delta.get("partial_json", ""))
            block.parts.append(partial)
            return [InputJsonDelta(index=index, partial_json=partial)] if partial else []
        return []

    def _block_stop(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        index = int(event["index"])
        block = self._open.pop(index, None)
        if block is None:
            return []
        try:
            final = self._finalize(index, block)
        except StreamInterruptedError as error:
            # A tool_use cut off by max_tokens ends with partial JSON. Whether that is a
            # broken stream or an output-limit stop is known only at message_delta.
            self._truncated[index] = error
            return []
        self._done[index] = final
        return [BlockComplete(index=index, block=final)]

    def _finalize(self, index: int, block: _OpenBlock) -> AssistantContentBlock:
        joined = "".join(block.parts)
        if block.whole is not None:
            return web_search_result_from_api(block.whole)
        if block.block_type in _CALLS:
            try:
                parsed = json.loads(joined) if joined.strip() else {}
            except json.JSONDecodeError as exc:
                raise self.interrupted(
                    f"tool_use block {index} ({block.tool_name}) ended with invalid JSON input: "
                    f"{exc.msg} in {joined[:200]!r}"
                ) from exc
            if not isinstance(parsed, dict):
                raise self.interrupted(f"tool_use block {index} input is not a JSON object")
            if block.block_type == "server_tool_use":
                return ServerToolUseBlock(id=block.tool_use_id, name=block.tool_name, input=parsed)
            return ToolUseBlock(id=block.tool_use_id, name=block.tool_name, input=parsed)
        if block.block_type == "thinking":
            return ThinkingBlock(thinking=joined, signature=block.signature)
        if block.block_type == "redacted_thinking":
            return RedactedThinkingBlock(data=block.data)
        return TextBlock(text=joined, citations=tuple(block.citations))

    def _message_delta(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        delta = event.get("delta") or {}
        if "stop_reason" in delta:
            self._stop_reason = delta.get("stop_reason")
        if "stop_sequence" in delta:
            self._stop_sequence = delta.get("stop_sequence")
        self._merge_usage(event.get("usage"))
        return [
            MessageDelta(
                stop_reason=self._stop_reason, usage=self.usage, stop_sequence=self._stop_sequence
            )
        ]

    def _message_stop(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        if self._open:
            raise self.interrupted("message_stop arrived while blocks were still open")
        if self._truncated and self._stop_reason != "max_tokens":
            raise next(iter(self._truncated.values()))
        # At max_tokens the cut-off tool_use is dropped: the reply is complete up to it, and
        # the loop's output-limit recovery asks for the rest.
        self.response = ModelResponse(
            id=self.message_id or "",
            model=self.model,
            content=self.completed_blocks,
            stop_reason=self._stop_reason,
            usage=self.usage,
            stop_sequence=self._stop_sequence,
        )
        return [MessageComplete(response=self.response)]

    def _error(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        error = event.get("error") or {}
        raise self.interrupted(
            f"the API sent an error event mid-stream: {error.get('type', 'error')}: "
            f"{error.get('message', '')}"
        )

    def _ignore(self, event: Mapping[str, Any]) -> list[StreamEvent]:
        return []

    def _merge_usage(self, usage: Any) -> None:
        # message_delta usage is cumulative: a field it carries replaces message_start's.
        if not isinstance(usage, Mapping):
            return
        for key, value in usage.items():
            if value is None:
                continue
            if key == "cache_creation" and isinstance(value, Mapping):
                merged = dict(self._usage.get("cache_creation") or {})
                merged.update({k: v for k, v in value.items() if v is not None})
                self._usage[key] = merged
            else:
                self._usage[key] = value


_HANDLERS = {
    "message_start": StreamAssembler._message_start,
    "content_block_start": StreamAssembler._block_start,
    "content_block_delta": StreamAssembler._block_delta,
    "content_block_stop": StreamAssembler._block_stop,
    "message_delta": StreamAssembler._message_delta,
    "message_stop": StreamAssembler._message_stop,
    "error": StreamAssembler._error,
    "ping": StreamAssembler._ignore,
}
