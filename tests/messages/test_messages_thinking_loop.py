"""Extended thinking in an unfinished tool loop: the API's reading of its own rule.

The API rejects a request whose final assistant message, in an unfinished tool loop, does not
start with a thinking block ("a final `assistant` message must start with a thinking block
(preceeding the lastmost set of `tool_use` and `tool_result` blocks) ... To avoid this
requirement, disable `thinking`"). A response that carried thinking but lost it on the way
(unsigned after an interrupted stream, left last by a split, an attachment between the
parts) cannot be sent as it was: the request goes with thinking off (issue 32, item 8).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from msg_strategies import TOOLS, internal_arrays
from session_strategies import examples

from queryloop.context.request import RequestBuilder
from queryloop.messages import (
    AssistantMessage,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    normalize_messages_for_api,
    validate_api_request,
)
from queryloop.messages.api_types import ApiMessage

ENABLED = {"type": "enabled", "budget_tokens": 1024}


def final_assistant_lost_thinking(history: Sequence[Message], api: Sequence[ApiMessage]) -> bool:
    """The strict reading: the array ends with tool_results and the last assistant message,
    whose response carried thinking, does not start with it."""
    if not api or api[-1]["role"] != "user" or api[-1]["content"][0].get("type") != "tool_result":
        return False
    final = next(m for m in reversed(api) if m["role"] == "assistant")
    if final["content"][0].get("type") in ("thinking", "redacted_thinking"):
        return False
    ids = {b.get("id") for b in final["content"] if b.get("type") == "tool_use"}
    return any(
        isinstance(m, AssistantMessage)
        and any(b.type == "thinking" for b in m.content)
        and any(b.type == "tool_use" and b.id in ids for b in m.content)
        for m in history
    )


def builder() -> RequestBuilder:
    return RequestBuilder(model="m", system=[], tools=TOOLS, cache_ttl=None, thinking=ENABLED)


def body(history: Sequence[Message]) -> dict[str, Any]:
    request = builder().build(list(history), max_tokens=2048)
    out: dict[str, Any] = {
        "model": "m",
        "max_tokens": 2048,
        "messages": request.messages,
        "tools": request.tools,
    }
    if request.thinking is not None:
        out["thinking"] = request.thinking
    return out


def unsigned_last_step() -> list[Message]:
    """A loop whose second response was cut off: its thinking has no signature."""
    return [
        UserMessage(content=(TextBlock("fix it"),)),
        AssistantMessage(
            content=(ThinkingBlock("plan", signature="sig"), ToolUseBlock("t1", "Read", {})),
            message_id="r1",
        ),
        UserMessage(content=(ToolResultBlock("t1", "x"),)),
        AssistantMessage(
            content=(ThinkingBlock("half a thought", signature=""), ToolUseBlock("t2", "Read", {})),
            message_id="r2",
        ),
        UserMessage(content=(ToolResultBlock("t2", "[interrupted]", is_error=True),)),
    ]


def test_a_lost_thinking_block_in_the_final_step_was_sent_with_thinking_on() -> None:
    history = unsigned_last_step()
    api = normalize_messages_for_api(history, TOOLS, thinking=ENABLED)
    # The pipeline alone keeps thinking on: the API reads this as an error.
    assert final_assistant_lost_thinking(history, api)


def test_the_request_goes_with_thinking_off_and_without_thinking_blocks() -> None:
    sent = body(unsigned_last_step())
    assert sent["thinking"] == {"type": "disabled"}
    assert not any(
        b.get("type") in ("thinking", "redacted_thinking")
        for m in sent["messages"]
        for b in m["content"]
    )
    assert [v for v in validate_api_request(sent) if v.is_error] == []


def test_a_finished_loop_thinks_again() -> None:
    history = [
        *unsigned_last_step(),
        AssistantMessage(
            content=(ThinkingBlock("ok", signature="s3"), TextBlock("done")), message_id="r3"
        ),
        UserMessage(content=(TextBlock("next task"),)),
    ]
    assert body(history)["thinking"] == ENABLED


def test_a_step_that_never_thought_keeps_thinking_on() -> None:
    """Without interleaved thinking a loop's later responses carry none: nothing was lost."""
    history = [
        *unsigned_last_step()[:3],
        AssistantMessage(content=(ToolUseBlock("t2", "Read", {}),), message_id="r2"),
        UserMessage(content=(ToolResultBlock("t2", "y"),)),
    ]
    assert body(history)["thinking"] == ENABLED


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(internal_arrays())
def test_no_request_keeps_thinking_on_over_a_lost_thinking_block(messages: list[Message]) -> None:
    sent = body(messages)
    if not sent["messages"]:
        return
    if sent.get("thinking") == ENABLED:
        assert not final_assistant_lost_thinking(messages, sent["messages"])
    assert [v for v in validate_api_request(sent) if v.is_error] == []
