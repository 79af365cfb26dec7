"""In-process fakes for loop unit tests: a provider that replays scripted responses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from queryloop.abort import AbortSignal
from queryloop.messages import (
    AssistantContentBlock,
    Message,
    TextBlock,
    ToolUseBlock,
    Usage,
)
from queryloop.messages.api_types import ApiTool
from queryloop.messages.serialization import message_to_dict
from queryloop.providers.base import (
    BlockComplete,
    BlockStart,
    MessageComplete,
    MessageDelta,
    MessageStart,
    ModelRequest,
    ModelResponse,
    StreamEvent,
    TextDelta,
)
from queryloop.providers.errors import ProviderError, StreamInterruptedError


@dataclass
class Reply:
    """One scripted response: blocks, a stop reason, or an error raised after `cut_after`."""

    blocks: Sequence[AssistantContentBlock] = ()
    stop_reason: str = "end_turn"
    error: ProviderError | None = None
    cut_after: int | None = None
    output_tokens: int = 10
    delay: float = 0.0


def text(t: str, **kw: Any) -> Reply:
    return Reply(blocks=(TextBlock(text=t),), **kw)


def tools(*calls: tuple[str, str, dict[str, Any]], **kw: Any) -> Reply:
    return Reply(
        blocks=tuple(ToolUseBlock(id=i, name=n, input=inp) for i, n, inp in calls),
        stop_reason="tool_use",
        **kw,
    )


@dataclass
class FakeProvider:
    replies: list[Reply | Callable[[ModelRequest], Reply]]
    name: str = "fake"
    requests: list[ModelRequest] = field(default_factory=list)
    stream_ended_at: list[float] = field(default_factory=list)

    async def stream(
        self, request: ModelRequest, abort: AbortSignal | None = None
    ) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError("unexpected extra model call")
        reply = self.replies.pop(0)
        if callable(reply):
            reply = reply(request)
        if reply.error is not None and reply.cut_after is None:
            raise reply.error
        yield MessageStart(
            message_id=f"msg_{len(self.requests)}", model=request.model, usage=Usage()
        )
        done: list[AssistantContentBlock] = []
        for index, block in enumerate(reply.blocks):
            if reply.cut_after is not None and index >= reply.cut_after:
                raise reply.error or StreamInterruptedError("cut", completed_blocks=done)
            if reply.delay:
                await asyncio.sleep(reply.delay)
            if abort is not None and abort.aborted:
                return
            yield BlockStart(index=index, block_type=block.type)
            if isinstance(block, TextBlock):
                yield TextDelta(index=index, text=block.text)
            done.append(block)
            yield BlockComplete(index=index, block=block)
        usage = Usage(input_tokens=100, output_tokens=reply.output_tokens)
        self.stream_ended_at.append(asyncio.get_running_loop().time())
        yield MessageDelta(stop_reason=reply.stop_reason, usage=usage)
        yield MessageComplete(
            ModelResponse(
                id=f"msg_{len(self.requests)}",
                model=request.model,
                content=tuple(done),
                stop_reason=reply.stop_reason,
                usage=usage,
            )
        )


class SimpleBuilder:
    """Builds requests with the real normalization pipeline, no caching or context."""

    def __init__(self, tool_schemas: Sequence[ApiTool] = (), model: str = "main-model") -> None:
        self.tool_schemas = list(tool_schemas)
        self.model = model

    def build(
        self, messages: Sequence[Message], *, max_tokens: int, model: str | None = None
    ) -> ModelRequest:
        from queryloop.messages import normalize_messages_for_api

        api = normalize_messages_for_api(messages, self.tool_schemas, thinking_enabled=False)
        return ModelRequest(
            model=model or self.model, messages=api, max_tokens=max_tokens, tools=self.tool_schemas
        )


def dump(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [message_to_dict(m) for m in messages]
