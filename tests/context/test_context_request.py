"""Cache-aware requests: breakpoint placement, stable tool bytes, channel positions."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from queryloop.context import (
    MAX_CACHE_BREAKPOINTS,
    RequestBuilder,
    apply_cache_breakpoints,
    build_system_prompt,
    count_breakpoints,
)
from queryloop.errors import ConfigError
from queryloop.messages import (
    Message,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    assistant_message,
    attachment_message,
    tool_result_message,
    user_message,
    validate_api_request,
)
from queryloop.tools.base import BaseTool, ToolContext, ToolProgress, ToolResult

EPHEMERAL = {"type": "ephemeral"}


class PathInput(BaseModel):
    path: str


class ReadLike(BaseTool[PathInput]):
    name = "Read"
    description = "Read a file."
    input_model: type[BaseModel] = PathInput


class Moody(BaseTool[PathInput]):
    """A tool whose definition would render differently on every call."""

    name = "Moody"
    input_model: type[BaseModel] = PathInput

    def __init__(self) -> None:
        self.renders = 0

    @property
    def description(self) -> str:  # type: ignore[override]
        self.renders += 1
        return f"rendered {self.renders} times"

    def input_schema(self) -> dict[str, Any]:
        schema = super().input_schema()
        schema["x-render"] = self.renders
        return schema

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        yield ToolResult(content="ok")


def builder(**kw: Any) -> RequestBuilder:
    defaults: dict[str, Any] = {
        "model": "claude-test",
        "system": build_system_prompt(attribution="attr", dynamic_suffix="env", append="more"),
        "tools": [ReadLike(), Moody()],
        "user_context": {"currentDate": "Today's date is 2026-01-01."},
    }
    return RequestBuilder(**(defaults | kw))


def history() -> list[Message]:
    return [
        user_message("fix the bug"),
        assistant_message(
            [TextBlock("Looking."), ToolUseBlock(id="toolu_1", name="Read", input={"path": "a"})],
            message_id="msg_1",
            stop_reason="tool_use",
        ),
        tool_result_message("toolu_1", "contents of a"),
    ]


def flat_blocks(messages: Sequence[Any]) -> list[str]:
    """(role, block without cache_control) as JSON, message by message."""
    out = []
    for m in messages:
        for b in m["content"]:
            clean = {k: v for k, v in b.items() if k != "cache_control"}
            out.append(json.dumps([m["role"], clean]))
    return out


def test_three_breakpoints_exactly_where_the_reference_puts_them() -> None:
    request = builder().build(history(), max_tokens=1000)
    body = request.to_body()
    assert validate_api_request(body) == []
    system = body["system"]
    assert [("cache_control" in b) for b in system] == [False, False, True, True]
    assert all("cache_control" not in t for t in body["tools"])
    last = body["messages"][-1]["content"]
    assert last[-1]["cache_control"] == EPHEMERAL
    assert count_breakpoints(system, body["messages"], body["tools"]) == 3
    assert request.cache_ttl == "5m"


def test_user_context_is_first_and_attachments_follow_tool_results() -> None:
    msgs = [*history(), attachment_message("queued_command", prompt="and the docs")]
    body = builder().build(msgs, max_tokens=1000).to_body()
    first = body["messages"][0]
    assert first["role"] == "user"
    assert first["content"][0]["text"].startswith("<system-reminder>\nAs you answer")
    assert "Today's date is 2026-01-01." in first["content"][0]["text"]
    assert first["content"][1]["text"] == "fix the bug"
    last = body["messages"][-1]["content"]
    assert last[0]["type"] == "tool_result"
    assert last[1]["text"].startswith("<system-reminder>\nThe user sent the following message")
    assert "cache_control" in last[1] and "cache_control" not in last[0]
    assert validate_api_request(body) == []


def test_breakpoint_moves_forward_and_the_prefix_stays_byte_identical() -> None:
    b = builder()
    msgs = history()
    first = b.build(msgs, max_tokens=1000).to_body()
    msgs += [
        assistant_message("Fixed.", message_id="msg_2"),
        user_message("thanks, now the tests"),
    ]
    second = b.build(msgs, max_tokens=1000).to_body()
    assert json.dumps(first["tools"]) == json.dumps(second["tools"])
    assert json.dumps(first["system"]) == json.dumps(second["system"])
    head = flat_blocks(first["messages"])
    assert flat_blocks(second["messages"])[: len(head)] == head
    assert count_breakpoints((), second["messages"]) == 1  # the old one was not kept
    assert "cache_control" in second["messages"][-1]["content"][-1]


def test_tool_schema_bytes_never_change_in_a_session() -> None:
    moody = Moody()
    b = builder(tools=[ReadLike(), moody])
    first = b.build(history(), max_tokens=100)
    frozen = json.dumps(list(first.tools)).encode()
    first.tools[1]["input_schema"]["x-render"] = 999  # a caller scribbling on its copy
    for _ in range(3):
        assert moody.description != moody.description  # the live tool keeps changing
        again = b.build(history(), max_tokens=100)
        assert json.dumps(list(again.tools)).encode() == frozen
    assert b.schemas.serialized("Moody") == json.dumps(json.loads(frozen)[1], ensure_ascii=False)
    assert b.tool_names == ["Read", "Moody"]


def test_extra_tools_are_appended_at_the_end() -> None:
    b = builder()
    base = b.build(history(), max_tokens=100)
    extra = {"name": "mcp__s__t", "description": "d", "input_schema": {"type": "object"}}
    more = b.build(history(), max_tokens=100, extra_tools=[extra, ReadLike()])
    assert [t["name"] for t in more.tools] == ["Read", "Moody", "mcp__s__t"]
    assert json.dumps(list(more.tools)[:2]) == json.dumps(list(base.tools))
    assert validate_api_request(more.to_body()) == []


def test_nothing_shared_is_mutated() -> None:
    system = build_system_prompt(attribution=None, dynamic_suffix="d", append=None)
    system_before = copy.deepcopy(system)
    b = builder(system=system)
    msgs = history()
    snapshot = [repr(m) for m in msgs]
    b.build(msgs, max_tokens=100)
    b.build(msgs, max_tokens=100)
    assert system == system_before
    assert [repr(m) for m in msgs] == snapshot


def test_cache_disabled_and_one_hour_ttl() -> None:
    body = builder(cache_ttl=None).build(history(), max_tokens=100).to_body()
    assert count_breakpoints(body["system"], body["messages"], body["tools"]) == 0
    hour = builder(cache_ttl="1h").build(history(), max_tokens=100).to_body()
    assert hour["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert validate_api_request(hour) == []
    with pytest.raises(ConfigError, match="cache_ttl"):
        builder(cache_ttl="10m")


def test_thinking_and_empty_blocks_never_get_the_marker() -> None:
    messages: list[Any] = [
        {"role": "user", "content": [{"type": "text", "text": "q"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "answer"},
                {"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "redacted_thinking", "data": "x"},
                {"type": "text", "text": "  "},
            ],
        },
    ]
    original = copy.deepcopy(messages)
    _, out = apply_cache_breakpoints([], messages, ttl="5m")
    assert out[1]["content"][0]["cache_control"] == EPHEMERAL
    assert all("cache_control" not in b for b in out[1]["content"][1:])
    assert messages == original  # copies only

    only_thinking: list[Any] = [
        messages[0],
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]},
    ]
    _, out = apply_cache_breakpoints([], only_thinking, ttl="5m")
    assert out[0]["content"][0]["cache_control"] == EPHEMERAL  # walked back a message


def test_never_more_than_four_breakpoints() -> None:
    system: list[Any] = [{"type": "text", "text": t} for t in "abcd"]
    messages: list[Any] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "x", "cache_control": EPHEMERAL},
                {"type": "text", "text": "y", "cache_control": EPHEMERAL},
                {"type": "text", "text": "z"},
            ],
        }
    ]
    tools = [{"name": "t", "cache_control": EPHEMERAL}]
    sys_out, msg_out = apply_cache_breakpoints(system, messages, ttl="5m", tools=tools)
    assert count_breakpoints(sys_out, msg_out, tools) == MAX_CACHE_BREAKPOINTS
    assert "cache_control" in msg_out[0]["content"][2]  # the moving one is placed first


def test_thinking_history_with_thinking_enabled_validates() -> None:
    msgs: list[Message] = [
        user_message("go"),
        assistant_message(
            [
                ThinkingBlock("hmm", signature="sig"),
                ToolUseBlock(id="toolu_9", name="Read", input={"path": "b"}),
            ],
            message_id="m9",
            stop_reason="tool_use",
        ),
        tool_result_message("toolu_9", "b's text"),
    ]
    b = builder(thinking={"type": "enabled", "budget_tokens": 1024})
    body = b.build(msgs, max_tokens=4096).to_body()
    assert body["messages"][1]["content"][0]["type"] == "thinking"
    assert "cache_control" not in body["messages"][1]["content"][0]
    assert validate_api_request(body) == []


def test_compaction_request_reuses_the_cached_prefix() -> None:
    b = builder()
    msgs = [*history(), assistant_message("Done.", message_id="msg_2")]
    msgs.append(user_message("and then?"))
    normal = b.build(msgs, max_tokens=1000).to_body()
    compaction = b.build_compaction_request(msgs, "Summarize now.", 8000).to_body()
    assert compaction["tools"] == normal["tools"]
    assert compaction["system"] == normal["system"]
    head = flat_blocks(normal["messages"])
    assert flat_blocks(compaction["messages"])[: len(head)] == head
    assert compaction["messages"][-1]["content"][-1]["text"] == "Summarize now."
    assert compaction["messages"][-1]["content"][-1]["cache_control"] == EPHEMERAL
    assert compaction["max_tokens"] == 8000
    assert validate_api_request(compaction) == []


def test_duplicate_tool_names_are_refused() -> None:
    with pytest.raises(ConfigError, match="Read"):
        builder(tools=[ReadLike(), ReadLike()])
