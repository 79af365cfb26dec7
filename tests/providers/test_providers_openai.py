"""OpenAICompatProvider over real HTTP: the official openai SDK against the local server."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator

import pytest

from queryloop.messages.blocks import TextBlock, ToolUseBlock
from queryloop.providers.base import BlockComplete, ModelRequest, complete
from queryloop.providers.errors import (
    AuthenticationError,
    OverloadedError,
    PromptTooLongError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)
from queryloop.providers.openai_compat import OpenAICompatProvider
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import (
    Fault,
    MessagesServer,
    cut_stream,
    http_error,
    rate_limited,
    server_error,
    text,
    tool_use,
    turn,
)
from queryloop.testing.pytest_plugin import messages_server

__all__ = ["messages_server"]

FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.02)
TOOLS = [
    {
        "name": "Read",
        "description": "Read a file",
        "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}},
    }
]


@pytest.fixture
async def provider(messages_server: MessagesServer) -> AsyncIterator[OpenAICompatProvider]:
    async with OpenAICompatProvider(
        base_url=messages_server.base_url + "/v1", api_key="dummy", retry=FAST
    ) as p:
        yield p


def _conversation() -> ModelRequest:
    image = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    return ModelRequest(
        model="llama3.1",
        max_tokens=1000,
        system=[{"type": "text", "text": "You are terse."}],
        tools=TOOLS,  # type: ignore[arg-type]
        messages=[
            {"role": "user", "content": [{"type": "text", "text": "read a.py"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Reading."},
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Read",
                        "input": {"file_path": "a.py"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "print(1)"},
                    {"type": "image", "source": image},
                    {"type": "text", "text": "and this screenshot"},
                ],
            },
        ],
    )


async def test_request_translation_and_streamed_tool_calls(
    messages_server: MessagesServer, provider: OpenAICompatProvider
) -> None:
    inputs = [{"file_path": "caf\u00e9/\u2603.py"}, {"file_path": 'q"uote\\.py'}]
    messages_server.script(
        [turn(text("Two reads."), tool_use("Read", inputs[0]), tool_use("Read", inputs[1]))]
    )
    events = [e async for e in provider.stream(_conversation())]
    body = messages_server.requests[0]
    assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool", "user"]
    assistant = body["messages"][2]
    assert assistant["content"] == "Reading."
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"file_path": "a.py"}
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "toolu_1", "content": "print(1)"}
    assert body["messages"][4]["content"][0]["image_url"]["url"].startswith(
        "data:image/png;base64,"
    )
    assert body["tools"][0]["function"]["name"] == "Read"
    assert body["stream_options"] == {"include_usage": True}
    blocks = [e.block for e in events if isinstance(e, BlockComplete)]
    assert blocks[0] == TextBlock("Two reads.")
    assert [dict(b.input) for b in blocks[1:] if isinstance(b, ToolUseBlock)] == inputs
    assert all(isinstance(b, ToolUseBlock) and b.id.startswith("call_") for b in blocks[1:])
    response = events[-1].response  # type: ignore[union-attr]
    assert response.stop_reason == "tool_use"
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0


async def test_text_and_finish_reasons(
    messages_server: MessagesServer, provider: OpenAICompatProvider
) -> None:
    messages_server.script([turn("plain answer"), turn(text("word " * 300))])
    first = await complete(provider, _conversation())
    assert first.content == (TextBlock("plain answer"),) and first.stop_reason == "end_turn"
    request = _conversation()
    truncated = await complete(provider, dataclasses.replace(request, max_tokens=30))
    assert truncated.stop_reason == "max_tokens"


async def test_context_length_error_is_prompt_too_long() -> None:
    with MessagesServer(context_window=20) as server:
        async with OpenAICompatProvider(
            base_url=server.base_url + "/v1", api_key="x", retry=FAST
        ) as p:
            with pytest.raises(PromptTooLongError) as info:
                await complete(p, _conversation())
    assert info.value.max_tokens == 20
    assert info.value.actual_tokens is not None and info.value.actual_tokens > 20
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("fault", "error_class", "attempts"),
    [
        (rate_limited(0.0), RateLimitError, 3),
        (server_error(503), ServerError, 3),
        (http_error(529, "overloaded_error", "Overloaded"), OverloadedError, 3),
        (http_error(401, "invalid_api_key", "Incorrect API key provided"), AuthenticationError, 1),
    ],
)
async def test_errors_are_typed(
    messages_server: MessagesServer,
    provider: OpenAICompatProvider,
    fault: Fault,
    error_class: type[Exception],
    attempts: int,
) -> None:
    messages_server.inject(*[fault] * 3)
    with pytest.raises(error_class):
        await complete(provider, _conversation())
    assert len(messages_server.requests) == attempts


async def test_retry_then_success(
    messages_server: MessagesServer, provider: OpenAICompatProvider
) -> None:
    messages_server.script([turn("ok after retry")])
    messages_server.inject(rate_limited(0.05))
    response = await complete(provider, _conversation())
    assert response.content == (TextBlock("ok after retry"),)
    times = [r.received_at for r in messages_server.recorded]
    assert len(times) == 2 and times[1] - times[0] >= 0.04


async def test_stream_cut_mid_tool_call_is_interrupted(
    messages_server: MessagesServer, provider: OpenAICompatProvider
) -> None:
    messages_server.script(
        [turn(text("Reading the whole file now"), tool_use("Read", {"file_path": "x" * 40}))]
    )
    messages_server.inject(cut_stream())
    with pytest.raises(StreamInterruptedError):
        await complete(provider, _conversation())
    assert len(messages_server.requests) == 1


def test_chunk_assembler_reasoning_and_unnamed_calls() -> None:
    from queryloop.messages.blocks import ThinkingBlock
    from queryloop.providers.openai_translate import OpenAIChunkAssembler

    def chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
        return {
            "id": "c1",
            "model": "qwen3",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    asm = OpenAIChunkAssembler()
    events = asm.feed(chunk({"role": "assistant", "reasoning_content": "think "}))
    events += asm.feed(chunk({"reasoning_content": "more"}))
    events += asm.feed(chunk({"content": "Answer."}))
    events += asm.feed(
        chunk({"tool_calls": [{"index": 0, "function": {"name": "LS", "arguments": '{"pa'}}]})
    )
    events += asm.feed(
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'th": "."}'}}]}, "stop")
    )
    events += asm.feed(
        {"id": "c1", "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}}
    )
    events += asm.finish()
    blocks = [e.block for e in events if isinstance(e, BlockComplete)]
    assert blocks[:2] == [ThinkingBlock("think more"), TextBlock("Answer.")]
    assert isinstance(blocks[2], ToolUseBlock) and blocks[2].input == {"path": "."} and blocks[2].id
    response = events[-1].response  # type: ignore[union-attr]
    assert response.stop_reason == "tool_use"  # "stop" after a tool call still means tool_use
    assert (response.usage.input_tokens, response.usage.output_tokens) == (9, 4)
