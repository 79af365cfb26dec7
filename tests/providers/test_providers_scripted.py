"""ScriptedProvider: in-process turns through the same assembler as the real provider."""

from __future__ import annotations

import pytest

from queryloop.abort import AbortSignal
from queryloop.messages.blocks import TextBlock, ToolUseBlock
from queryloop.providers import (
    BlockComplete,
    MessageComplete,
    ModelRequest,
    OverloadedError,
    StreamAbortedError,
    complete,
)
from queryloop.testing import ScriptedProvider, ScriptExhaustedError, text, tool_use, turn


def _request(prompt: str = "hi", max_tokens: int = 1000) -> ModelRequest:
    return ModelRequest(
        model="claude-sonnet-5-5",
        max_tokens=max_tokens,
        messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
    )


async def test_turns_errors_and_recorded_requests() -> None:
    provider = ScriptedProvider(
        [
            turn(text("Reading."), tool_use("Read", {"file_path": "\u00e9.py"}, id="toolu_a")),
            OverloadedError("Overloaded", status=529),
            "Done.",
        ]
    )
    events = [e async for e in provider.stream(_request("one"))]
    blocks = [e.block for e in events if isinstance(e, BlockComplete)]
    assert blocks == [TextBlock("Reading."), ToolUseBlock("toolu_a", "Read", {"file_path": "é.py"})]
    assert isinstance(events[-1], MessageComplete) and events[-1].response.stop_reason == "tool_use"
    with pytest.raises(OverloadedError):
        await complete(provider, _request("two"))
    assert (await complete(provider, _request("three"))).content == (TextBlock("Done."),)
    assert [r.messages[0]["content"][0]["text"] for r in provider.requests] == [
        "one",
        "two",
        "three",
    ]
    provider.assert_complete()
    with pytest.raises(ScriptExhaustedError, match="unexpected model call #4"):
        await complete(provider, _request("four"))


async def test_callable_script_and_assert_complete() -> None:
    provider = ScriptedProvider(lambda request: f"echo {request.messages[0]['content'][0]['text']}")
    assert (await complete(provider, _request("ping"))).content == (TextBlock("echo ping"),)
    unused = ScriptedProvider(["a", "b"])
    await complete(unused, _request())
    with pytest.raises(AssertionError, match="1 scripted step"):
        unused.assert_complete()


async def test_max_tokens_and_abort() -> None:
    provider = ScriptedProvider([turn(text("long " * 200)), turn(text("x " * 50))])
    assert (await complete(provider, _request(max_tokens=20))).stop_reason == "max_tokens"
    abort = AbortSignal()
    with pytest.raises(StreamAbortedError):
        async for _ in provider.stream(_request(), abort):
            abort.abort("stop")
