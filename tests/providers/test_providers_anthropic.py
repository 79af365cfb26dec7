"""AnthropicProvider over real HTTP: the official SDK against the local scripted server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from queryloop.abort import AbortSignal
from queryloop.messages.blocks import TextBlock, ThinkingBlock, ToolUseBlock
from queryloop.providers.anthropic import AnthropicProvider
from queryloop.providers.base import (
    BlockComplete,
    InputJsonDelta,
    MessageComplete,
    ModelRequest,
    ProviderEvent,
    complete,
)
from queryloop.providers.errors import (
    AuthenticationError,
    InvalidRequestError,
    MediaError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    PromptTooLongError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    RequestTooLargeError,
    ServerError,
    StreamAbortedError,
    StreamInterruptedError,
)
from queryloop.providers.models import cost_usd
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import (
    Fault,
    MessagesServer,
    cut_stream,
    http_error,
    overloaded,
    overloaded_mid_stream,
    rate_limited,
    request_too_large,
    server_error,
    text,
    thinking,
    tool_use,
    turn,
)
from queryloop.testing.pytest_plugin import messages_server

__all__ = ["messages_server"]

MODEL = "claude-sonnet-5-5"
FAST = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05)


def _request(prompt: str = "hi", **kw: object) -> ModelRequest:
    messages = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
    return ModelRequest(model=MODEL, max_tokens=kw.pop("max_tokens", 4096), messages=messages, **kw)  # type: ignore[arg-type]


@pytest.fixture
async def provider(messages_server: MessagesServer) -> AsyncIterator[AnthropicProvider]:
    async with AnthropicProvider(
        api_key="test-key", base_url=messages_server.base_url, retry=FAST
    ) as p:
        yield p


async def _events(provider: AnthropicProvider, request: ModelRequest) -> list[ProviderEvent]:
    return [e async for e in provider.stream(request)]


async def test_text_response(messages_server: MessagesServer, provider: AnthropicProvider) -> None:
    messages_server.script([turn(text("Hello from the scripted model."))])
    response = await complete(provider, _request())
    assert response.content == (TextBlock("Hello from the scripted model."),)
    assert response.stop_reason == "end_turn"
    assert response.id.startswith("msg_")
    assert messages_server.requests[0]["stream"] is True
    assert messages_server.requests[0]["messages"][0]["content"][0]["text"] == "hi"


async def test_several_tool_uses_with_awkward_partial_json(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    inputs: list[dict[str, Any]] = [
        {"file_path": "src/caf\u00e9/\u2603 snow.py", "offset": 10},
        {"command": 'echo "quoted \\ back" && ls', "timeout": 5},
        {"todos": [{"content": "\u65e5\u672c\u8a9e", "status": "pending"}]},
    ]
    messages_server.script(
        [
            turn(
                text("Working."),
                *(
                    tool_use(n, i)
                    for n, i in zip(["Read", "Bash", "TodoWrite"], inputs, strict=True)
                ),
            )
        ]
    )
    events = await _events(provider, _request())
    tools = [
        e.block
        for e in events
        if isinstance(e, BlockComplete) and isinstance(e.block, ToolUseBlock)
    ]
    assert [dict(t.input) for t in tools] == inputs
    assert all(t.id.startswith("toolu_") for t in tools) and len({t.id for t in tools}) == 3
    pieces = [e.partial_json for e in events if isinstance(e, InputJsonDelta) and e.index == 1]
    assert any(p.endswith(("\\u0", "\\u2")) or p.startswith("\\u") for p in pieces)
    # Each tool_use completes before the message ends: streaming tool execution can start.
    first_tool = next(
        i for i, e in enumerate(events) if isinstance(e, BlockComplete) and e.index == 1
    )
    assert first_tool < len(events) - 3
    assert isinstance(events[-1], MessageComplete)
    assert events[-1].response.stop_reason == "tool_use"


async def test_thinking_with_signature(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    messages_server.script(
        [turn(thinking("Consider the file first.", signature="EqSig=="), text("Done."))]
    )
    response = await complete(
        provider, _request(thinking={"type": "enabled", "budget_tokens": 2048})
    )
    assert response.content == (
        ThinkingBlock("Consider the file first.", "EqSig=="),
        TextBlock("Done."),
    )
    assert messages_server.requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 2048}


ERROR_CASES = [
    (
        http_error(
            400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
        ),
        PromptTooLongError,
    ),
    (
        http_error(
            400,
            "invalid_request_error",
            "messages.0.content.1.image.source.base64: image exceeds 5 MB maximum",
        ),
        MediaError,
    ),
    (
        http_error(400, "invalid_request_error", "messages: roles must alternate"),
        InvalidRequestError,
    ),
    (http_error(401, "authentication_error", "invalid x-api-key"), AuthenticationError),
    (http_error(403, "permission_error", "no access to this model"), PermissionDeniedError),
    (http_error(404, "not_found_error", "model: claude-nope"), NotFoundError),
    (request_too_large(), RequestTooLargeError),
]


@pytest.mark.parametrize(("fault", "error_class"), ERROR_CASES)
async def test_non_retryable_errors_are_typed_and_sent_once(
    messages_server: MessagesServer,
    provider: AnthropicProvider,
    fault: Fault,
    error_class: type[ProviderError],
) -> None:
    messages_server.inject(fault)
    with pytest.raises(error_class) as info:
        await complete(provider, _request())
    assert len(messages_server.requests) == 1  # never retried
    assert info.value.request_id is not None  # type: ignore[attr-defined]
    if isinstance(info.value, PromptTooLongError):
        assert (info.value.actual_tokens, info.value.max_tokens) == (210000, 200000)
    if isinstance(info.value, InvalidRequestError):
        assert "roles must alternate" in info.value.message


@pytest.mark.parametrize(
    ("fault", "error_class"),
    [
        (overloaded(), OverloadedError),
        (server_error(500), ServerError),
        (rate_limited(0.0), RateLimitError),
    ],
)
async def test_retryable_errors_exhaust_the_policy(
    messages_server: MessagesServer,
    provider: AnthropicProvider,
    fault: Fault,
    error_class: type[ProviderError],
) -> None:
    messages_server.inject(*[fault] * 4)
    with pytest.raises(error_class):
        await complete(provider, _request())
    assert len(messages_server.requests) == 1 + FAST.max_retries


async def test_prompt_too_long_from_the_servers_context_window() -> None:
    with MessagesServer([turn("never")], context_window=50) as server:
        async with AnthropicProvider(api_key="k", base_url=server.base_url, retry=FAST) as p:
            with pytest.raises(PromptTooLongError) as info:
                await complete(p, _request("x" * 400))
        assert info.value.max_tokens == 50
        assert info.value.actual_tokens is not None and info.value.actual_tokens > 50
        assert len(server.requests) == 1


async def test_retry_honours_retry_after(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    messages_server.script([turn("after the wait")])
    messages_server.inject(rate_limited(0.4), rate_limited(0.3, in_ms=True))
    response = await complete(provider, _request())
    assert response.content == (TextBlock("after the wait"),)
    times = [r.received_at for r in messages_server.recorded]
    assert len(times) == 3
    # The waits follow the server's retry-after (0.4 s, 0.3 s), not the 10 ms backoff.
    assert times[1] - times[0] >= 0.38
    assert times[2] - times[1] >= 0.28


async def test_overload_error_event_before_content_is_retried(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    messages_server.script([turn("lost to the overload"), turn("second try")])
    messages_server.inject(overloaded_mid_stream(after_blocks=0))
    response = await complete(provider, _request())
    assert response.content == (TextBlock("second try"),)
    assert len(messages_server.requests) == 2


async def test_overload_error_event_mid_message_interrupts_with_completed_blocks(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    messages_server.script([turn(text("first block"), tool_use("Read", {"file_path": "a"}))])
    messages_server.inject(overloaded_mid_stream(after_blocks=1))
    with pytest.raises(StreamInterruptedError) as info:
        await complete(provider, _request())
    assert info.value.completed_blocks == (TextBlock("first block"),)
    assert isinstance(info.value.__cause__, OverloadedError)
    assert len(messages_server.requests) == 1  # content was already streamed: no silent replay


async def test_stream_cut_after_tool_use_started(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    done = tool_use("Read", {"file_path": "done.py"}, id="toolu_done")
    messages_server.script(
        [turn(text("Reading two files."), done, tool_use("Read", {"file_path": "cut.py"}))]
    )
    messages_server.inject(cut_stream(after_block_start=2))
    seen: list[ProviderEvent] = []
    with pytest.raises(StreamInterruptedError) as info:
        async for event in provider.stream(_request()):
            seen.append(event)
    assert info.value.completed_blocks == (
        TextBlock("Reading two files."),
        ToolUseBlock("toolu_done", "Read", {"file_path": "done.py"}),
    )
    assert info.value.message_id is not None
    assert any(
        isinstance(e, BlockComplete) and e.block == done_block
        for e in seen
        for done_block in [info.value.completed_blocks[1]]
    )
    assert len(messages_server.requests) == 1


async def test_max_tokens_truncation(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    long_text = "word " * 400
    messages_server.script(
        [turn(text(long_text), tool_use("Write", {"content": "x" * 100})), turn(text(long_text))]
    )
    cut = await complete(provider, _request(max_tokens=50))
    assert cut.stop_reason == "max_tokens"
    assert cut.usage.output_tokens <= 50
    assert isinstance(cut.content[0], TextBlock) and len(cut.content[0].text) < len(long_text)
    assert not any(isinstance(b, ToolUseBlock) for b in cut.content)
    whole = await complete(provider, _request(max_tokens=8000))
    assert whole.stop_reason == "end_turn" and whole.content == (TextBlock(long_text),)


async def test_usage_cost_and_cache_read_on_second_request(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    system = [
        {
            "type": "text",
            "text": "You are a careful agent. " * 200,
            "cache_control": {"type": "ephemeral"},
        }
    ]
    messages_server.script([turn("one"), turn("two")])
    first = await complete(provider, _request("question one", system=system))
    second = await complete(provider, _request("question two", system=system))
    assert first.usage.cache_creation_input_tokens > 512
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.input_tokens == first.usage.input_tokens  # the uncached tail
    assert second.usage.output_tokens > 0
    # The cache read is far cheaper than the write: the second call costs less.
    assert 0 < cost_usd(second.usage, MODEL) < cost_usd(first.usage, MODEL)


async def test_abort_closes_the_stream_promptly(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    messages_server.event_delay = 0.05
    messages_server.script([turn(text("slow " * 200))])
    abort = AbortSignal()
    started = time.monotonic()
    seen = 0
    with pytest.raises(StreamAbortedError):
        async for _ in provider.stream(_request(), abort):
            seen += 1
            if seen == 3:
                abort.abort("test")
    # The whole response would take ~8 s at this pace; abort ended it at once.
    assert time.monotonic() - started < 4.0


async def test_abort_during_a_slow_read_does_not_wait_for_the_next_event(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    # The next event is 3 s away; the abort at 0.2 s must not wait for it (the bound leaves
    # room for a loaded machine).
    messages_server.event_delay = 3.0
    messages_server.script([turn(text("a b c"))])
    abort = AbortSignal()
    asyncio.get_running_loop().call_later(0.2, abort.abort, "timer")
    started = time.monotonic()
    with pytest.raises(StreamAbortedError):
        await complete(provider, _request(), abort)
    assert time.monotonic() - started < 2.5


async def test_connection_refused_is_a_connection_error() -> None:
    with MessagesServer() as server:
        url = server.base_url
    async with AnthropicProvider(
        api_key="k", base_url=url, retry=RetryPolicy(max_retries=1, base_delay=0.01)
    ) as p:
        with pytest.raises(ProviderConnectionError):
            await complete(p, _request())


async def test_unexpected_extra_call_fails_loudly(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    with pytest.raises(InvalidRequestError, match="unexpected model call"):
        await complete(provider, _request())
    assert messages_server.errors
    messages_server._state.errors.clear()  # this test expected it


async def test_betas_use_the_beta_endpoint_with_header(
    messages_server: MessagesServer, provider: AnthropicProvider
) -> None:
    messages_server.script([turn("ok")])
    await complete(
        provider,
        _request(
            betas=["context-management-2025-06-27"],
            context_management={"edits": []},
            temperature=0.2,
        ),
    )
    recorded = messages_server.recorded[0]
    assert "context-management-2025-06-27" in recorded.headers.get("anthropic-beta", "")
    assert recorded.body["context_management"] == {"edits": []}
    assert recorded.body["temperature"] == 0.2


async def test_read_timeout_is_a_timeout_error(messages_server: MessagesServer) -> None:
    messages_server.event_delay = 1.0
    messages_server.script([turn("too slow")])
    no_retry = RetryPolicy(max_retries=0)
    async with AnthropicProvider(
        api_key="k", base_url=messages_server.base_url, retry=no_retry, timeout=0.2
    ) as p:
        with pytest.raises(ProviderTimeoutError):
            await complete(p, _request())


async def test_count_tokens(messages_server: MessagesServer, provider: AnthropicProvider) -> None:
    from queryloop.testing import count_input_tokens

    request = _request("count these words please")
    assert await provider.count_tokens(request) == count_input_tokens(request.to_body())
    assert messages_server.recorded[0].path == "/v1/messages/count_tokens"
