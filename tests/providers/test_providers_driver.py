"""The one stream driver, through both SDK-backed providers over real HTTP.

Every behaviour of the attempt loop (hold-back and retry, mid-stream error mapping, abort) is
asserted identically for the Anthropic and the OpenAI-compatible provider, each on its official
SDK against the local `queryloop.testing` server.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator

import pytest

from queryloop.abort import AbortSignal
from queryloop.messages.blocks import TextBlock
from queryloop.providers.base import (
    MessageComplete,
    ModelProvider,
    ModelRequest,
    RetryWait,
    complete,
)
from queryloop.providers.errors import (
    OverloadedError,
    ServerError,
    StreamAbortedError,
    StreamInterruptedError,
)
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import (
    MessagesServer,
    cut_stream,
    overloaded_mid_stream,
    server_error,
    text,
    tool_use,
    turn,
)
from queryloop.testing.pytest_plugin import messages_server

__all__ = ["messages_server"]

FAST = RetryPolicy(max_retries=2, base_delay=0.01, max_delay=0.02)
PROVIDERS = ["anthropic", "openai"]


def _request(model: str) -> ModelRequest:
    messages = [{"role": "user", "content": [{"type": "text", "text": "go"}]}]
    return ModelRequest(model=model, max_tokens=1000, messages=messages)  # type: ignore[arg-type]


@pytest.fixture(params=PROVIDERS)
async def provider(
    request: pytest.FixtureRequest, messages_server: MessagesServer
) -> AsyncIterator[ModelProvider]:
    if request.param == "anthropic":
        from queryloop.providers.anthropic import AnthropicProvider

        async with AnthropicProvider(
            api_key="k", base_url=messages_server.base_url, retry=FAST
        ) as anthropic_provider:
            yield anthropic_provider
    else:
        from queryloop.providers.openai_compat import OpenAICompatProvider

        async with OpenAICompatProvider(
            base_url=messages_server.base_url + "/v1", api_key="k", retry=FAST
        ) as openai_provider:
            yield openai_provider


def _model(provider: ModelProvider) -> str:
    return "claude-sonnet-5-5" if provider.name == "anthropic" else "llama3.1"


async def test_overload_before_content_is_retried_cleanly(
    messages_server: MessagesServer, provider: ModelProvider
) -> None:
    messages_server.script([turn("lost to the overload"), turn("second try")])
    messages_server.inject(overloaded_mid_stream(after_blocks=0))
    response = await complete(provider, _request(_model(provider)))
    assert response.content == (TextBlock("second try"),)
    assert len(messages_server.requests) == 2


async def test_overload_after_content_interrupts_with_completed_blocks(
    messages_server: MessagesServer, provider: ModelProvider
) -> None:
    messages_server.script([turn(text("first block"), tool_use("Read", {"file_path": "a"}))])
    messages_server.inject(overloaded_mid_stream(after_blocks=1))
    with pytest.raises(StreamInterruptedError) as info:
        await complete(provider, _request(_model(provider)))
    assert info.value.completed_blocks == (TextBlock("first block"),)
    assert isinstance(info.value.__cause__, OverloadedError)
    assert len(messages_server.requests) == 1  # content was already streamed: no silent replay


async def test_cut_mid_block_interrupts_without_replay(
    messages_server: MessagesServer, provider: ModelProvider
) -> None:
    messages_server.script([turn(text("Reading it."), tool_use("Read", {"file_path": "x" * 60}))])
    messages_server.inject(cut_stream(after_block_start=1))
    with pytest.raises(StreamInterruptedError) as info:
        await complete(provider, _request(_model(provider)))
    assert info.value.completed_blocks == (TextBlock("Reading it."),)
    assert len(messages_server.requests) == 1


async def test_server_errors_retry_up_to_the_policy(
    messages_server: MessagesServer, provider: ModelProvider
) -> None:
    messages_server.inject(*[server_error(503)] * 3)
    with pytest.raises(ServerError):
        await complete(provider, _request(_model(provider)))
    assert len(messages_server.requests) == 3  # first try + max_retries


async def test_each_retry_is_announced_before_its_wait(
    messages_server: MessagesServer, provider: ModelProvider
) -> None:
    messages_server.inject(server_error(503), server_error(529))
    messages_server.script([turn("third time")])
    events = [e async for e in provider.stream(_request(_model(provider)))]
    waits = [e for e in events if isinstance(e, RetryWait)]
    assert [(w.attempt, w.max_retries) for w in waits] == [(1, 2), (2, 2)]
    assert [type(w.error) for w in waits] == [ServerError, OverloadedError]
    assert all(0 < w.delay_s <= FAST.max_delay * (1 + FAST.jitter) for w in waits)
    assert events.index(waits[-1]) < 2  # both before the response's first event
    assert isinstance(events[-1], MessageComplete)


async def test_abort_during_a_slow_read_is_prompt(
    messages_server: MessagesServer, provider: ModelProvider
) -> None:
    # The next event is 3 s away; the abort at 0.2 s must not wait for it (the bound leaves
    # room for a loaded machine).
    messages_server.event_delay = 3.0
    messages_server.script([turn(text("a b c"))])
    abort = AbortSignal()
    asyncio.get_running_loop().call_later(0.2, abort.abort, "timer")
    started = time.monotonic()
    with pytest.raises(StreamAbortedError):
        await complete(provider, _request(_model(provider)), abort)
    assert time.monotonic() - started < 2.5


def test_the_openai_provider_does_not_load_the_anthropic_sdk() -> None:
    script = textwrap.dedent(
        """
        import asyncio, sys
        from queryloop.providers.base import ModelRequest, complete
        from queryloop.providers.openai_compat import OpenAICompatProvider
        from queryloop.testing import MessagesServer, turn

        async def main(url):
            async with OpenAICompatProvider(base_url=url + "/v1", api_key="k") as p:
                msgs = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
                r = await complete(p, ModelRequest(model="m", max_tokens=50, messages=msgs))
                assert r.content[0].text == "hello", r

        with MessagesServer([turn("hello")]) as server:
            asyncio.run(main(server.base_url))
        print(sorted(m for m in sys.modules if m == "anthropic" or m.startswith("anthropic.")))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
