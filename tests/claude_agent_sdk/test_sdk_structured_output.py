"""The SDK's structured output through `query()`: `output_format={"type": "json_schema",
"schema": ...}` fills `ResultMessage.structured_output`; a model that never matches ends with
the SDK's `error_max_structured_output_retries`."""

from __future__ import annotations

from typing import Any

import pytest

from queryloop.claude_agent_sdk import (
    ClaudeAgentOptions,
    Message,
    ResultError,
    ResultMessage,
    query,
)
from queryloop.testing import OUTPUT_TOOL, MessagesServer, structured_output, text, turn

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "company": {"type": "string"},
        "founded": {"type": "integer"},
        "size": {"enum": ["small", "large"]},
    },
    "required": ["company", "founded", "size"],
}
OPTIONS = ClaudeAgentOptions(output_format={"type": "json_schema", "schema": SCHEMA})


async def test_output_format_fills_structured_output(sdk_server: MessagesServer) -> None:
    value = {"company": "Anthropic", "founded": 2021, "size": "large"}
    sdk_server.script([turn(text("Found it."), structured_output(value))])

    messages = [m async for m in query(prompt="Research Anthropic", options=OPTIONS)]

    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error) == ("success", False)
    assert result.structured_output == value
    [body] = sdk_server.requests
    assert {t["name"]: t["input_schema"] for t in body["tools"]}[OUTPUT_TOOL] == SCHEMA


async def test_never_matching_ends_with_error_max_structured_output_retries(
    sdk_server: MessagesServer,
) -> None:
    sdk_server.script([turn(structured_output({"company": "A", "founded": "soon"}))] * 10)
    seen: list[Message] = []

    with pytest.raises(ResultError) as caught:
        async for message in query(prompt="Research Anthropic", options=OPTIONS):
            seen.append(message)

    result = seen[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert result.subtype == caught.value.subtype == "error_max_structured_output_retries"
    assert result.structured_output is None and result.errors and "founded" in result.errors[0]
