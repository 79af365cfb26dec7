"""What we send follows the model table: its default thinking and whether it takes a prefill.

Issue 25.14: a model that thinks by default (Claude Sonnet 5.5, Opus 5, Fable 5, ...) was
treated as thinking-off when `thinking` is unset, so its signed thinking was stripped from
the tool loop it had opened. Issue 25.16: a prefill was sent to models that reject it
whenever the table did not know the model's spelling (a Bedrock or Vertex id, a model newer
than the table). Real loop, real HTTP, the strict local Messages API server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from queryloop import Agent
from queryloop.context import RequestBuilder, build_system_prompt
from queryloop.messages import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    assistant_message,
    tool_result_message,
    user_message,
)
from queryloop.messages.normalize_context import CONTINUE_TEXT
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer, text, thinking, tool_use, turn

TOOLS = [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}]


def _builder(model: str, **kw: Any) -> RequestBuilder:
    system = build_system_prompt(attribution=None, dynamic_suffix="env", append=None)
    return RequestBuilder(model=model, system=system, tools=TOOLS, cache_ttl=None, **kw)


def _open_loop() -> list[Message]:
    return [
        user_message("list the files"),
        assistant_message(
            [ThinkingBlock("look first", "sig"), ToolUseBlock("toolu_1", "Bash", {"c": "ls"})]
        ),
        tool_result_message("toolu_1", "a.py"),
    ]


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-opus-5", "claude-fable-5-1"])
def test_thinking_unset_keeps_the_thinking_of_a_model_that_thinks_by_default(model: str) -> None:
    request = _builder(model).build(_open_loop(), max_tokens=4096)
    assert request.thinking is None  # nothing sent: the model's default applies
    first = request.messages[1]["content"][0]
    assert first == {"type": "thinking", "thinking": "look first", "signature": "sig"}


def test_thinking_unset_on_a_model_that_thinks_only_when_asked_sends_none() -> None:
    request = _builder("claude-opus-4-8").build(_open_loop(), max_tokens=4096)
    assert [b["type"] for b in request.messages[1]["content"]] == ["tool_use"]


def _ends_with_assistant() -> list[Message]:
    return [user_message("Name a colour."), assistant_message([TextBlock("The colour is")])]


@pytest.mark.parametrize(
    "model",
    [
        "us.anthropic.claude-opus-4-6-v1:0",
        "claude-sonnet-4-6@20260217",
        "claude-mythos-preview",
        "claude-opus-4-9",
        "my-local-llama",
    ],
)
def test_no_prefill_reaches_a_model_that_rejects_it_or_is_unknown(model: str) -> None:
    """Instead of a prefill the final assistant message stays a finished turn and a short
    user message follows it."""
    request = _builder(model).build(_ends_with_assistant(), max_tokens=1024)
    assert request.messages[-2]["role"] == "assistant"
    assert request.messages[-1] == {
        "role": "user",
        "content": [{"type": "text", "text": CONTINUE_TEXT}],
    }


def test_a_model_known_to_take_a_prefill_still_gets_it() -> None:
    request = _builder("claude-sonnet-4-5").build(_ends_with_assistant(), max_tokens=1024)
    assert request.messages[-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "The colour is"}],
    }


async def test_a_tool_loop_on_sonnet_5_5_sends_back_its_thinking(tmp_path: Path) -> None:
    """The whole loop over HTTP: the second request carries the first response's thinking."""
    script = [
        turn(
            thinking("Check the files first.", signature="EqSig=="), tool_use("LS", {"path": "."})
        ),
        turn(text("There are no files.")),
    ]
    with MessagesServer(script, strict=True) as server:
        agent = Agent(
            "claude-sonnet-5-5",
            base_url=server.base_url,
            retry=RetryPolicy(max_retries=1, base_delay=0.01),
            cwd=tmp_path,
            permission_mode="bypassPermissions",
        )
        try:
            result = await agent.run("What files are here?")
        finally:
            await agent.aclose()
        assert [v for v in server.violations if v] == []
        bodies = server.requests
    assert result.text == "There are no files."
    assert "thinking" not in bodies[1]
    replayed = bodies[1]["messages"][-2]["content"][0]
    assert replayed == {
        "type": "thinking",
        "thinking": "Check the files first.",
        "signature": "EqSig==",
    }
