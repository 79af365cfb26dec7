"""The docs/testing.md example: a user's test scripting a model that drives the provider.

A tiny tool loop (the kind of code users write around queryloop) talks to the scripted
model over real HTTP: the model asks to read a file, the loop reads it, the model answers
from the tool result it was actually sent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from queryloop.messages.api_types import ApiTool
from queryloop.messages.blocks import ToolUseBlock, block_to_api
from queryloop.providers import AnthropicProvider, ModelRequest, complete
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn
from queryloop.testing.pytest_plugin import messages_server

__all__ = ["messages_server"]

READ_TOOL: ApiTool = {
    "name": "Read",
    "description": "Read a file",
    "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}},
}


def scripted_model(body: dict[str, Any]) -> Turn:
    """The fake model: read the file first, then answer from the tool result it received."""
    last = body["messages"][-1]["content"][0]
    if last["type"] != "tool_result":
        return turn(text("Let me look."), tool_use("Read", {"file_path": "notes.txt"}))
    return turn(text(f"The file says: {last['content']}"))


async def run_agent(provider: AnthropicProvider, prompt: str, cwd: Path) -> str:
    """The code under test: call the model, run Read tools, repeat until it stops."""
    messages: list[Any] = [{"role": "user", "content": [{"type": "text", "text": prompt}]}]
    while True:
        request = ModelRequest(
            model="claude-sonnet-5-5", max_tokens=1024, messages=messages, tools=[READ_TOOL]
        )
        response = await complete(provider, request)
        messages.append(
            {"role": "assistant", "content": [block_to_api(b) for b in response.content]}
        )
        calls = [b for b in response.content if isinstance(b, ToolUseBlock)]
        if response.stop_reason != "tool_use":
            return "".join(getattr(b, "text", "") for b in response.content)
        results = [
            {
                "type": "tool_result",
                "tool_use_id": c.id,
                "content": (cwd / c.input["file_path"]).read_text(),
            }
            for c in calls
        ]
        messages.append({"role": "user", "content": results})


async def test_scripted_model_drives_the_agent(
    messages_server: MessagesServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("ship on Friday")
    messages_server.script(scripted_model)

    async with AnthropicProvider(api_key="test", base_url=messages_server.base_url) as provider:
        answer = await run_agent(provider, "What do my notes say?", tmp_path)

    assert answer == "The file says: ship on Friday"
    assert len(messages_server.requests) == 2
    second = messages_server.requests[1]["messages"]
    assert second[1]["content"][1]["name"] == "Read"
    assert second[2]["content"][0]["tool_use_id"] == second[1]["content"][1]["id"]
    assert messages_server.violations == [[], []]  # both requests obey the API's rules
