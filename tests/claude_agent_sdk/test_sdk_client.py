"""`ClaudeSDKClient`: a conversation with prompts in and messages out, interrupts, mode
and model switches, against the local Messages API server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from queryloop.claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLIConnectionError,
    Message,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
)
from queryloop.testing import MessagesServer, text, tool_use, turn


async def response(client: ClaudeSDKClient) -> list[Message]:
    return [m async for m in client.receive_response()]


def texts(messages: list[Message]) -> list[str]:
    return [
        b.text
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, TextBlock)
    ]


async def test_a_multi_turn_conversation_keeps_its_context(sdk_server: MessagesServer) -> None:
    sdk_server.script([turn(text("Paris.")), turn(text("About 2.1 million."))])

    async with ClaudeSDKClient() as client:
        await client.query("What's the capital of France?")
        first = await response(client)
        await client.query("What's the population of that city?")
        second = await response(client)

    assert texts(first) == ["Paris."] and texts(second) == ["About 2.1 million."]
    assert isinstance(first[0], SystemMessage) and first[0].subtype == "init"
    assert isinstance(first[-1], ResultMessage) and isinstance(second[-1], ResultMessage)
    assert first[-1].session_id == second[-1].session_id
    later = str(sdk_server.requests[1]["messages"])
    assert "capital of France" in later and "Paris." in later


async def test_prompts_queued_while_one_runs_each_get_their_own_result(
    sdk_server: MessagesServer,
) -> None:
    """`receive_messages()` in the background while `query()` sends: every prompt runs, in
    order, each ending with its result."""
    sdk_server.script([turn(text("4")), turn(text("12")), turn(text("8"))])
    seen: list[Message] = []

    async with ClaudeSDKClient() as client:

        async def read() -> None:
            async for message in client.receive_messages():
                seen.append(message)
                if sum(isinstance(m, ResultMessage) for m in seen) == 3:
                    return

        reader = asyncio.create_task(read())
        for question in ("What is 2 + 2?", "Square root of 144?", "10% of 80?"):
            await client.query(question)
        await reader

    assert texts(seen) == ["4", "12", "8"]


async def test_connect_with_an_async_iterable_and_receive_each_turn(
    sdk_server: MessagesServer,
) -> None:
    sdk_server.script([turn(text("Hello!")), turn(text("Tokyo."))])

    async def stream() -> AsyncIterator[dict[str, Any]]:
        for content in ("Hi, I have questions.", "Capital of Japan?"):
            yield {
                "type": "user",
                "message": {"role": "user", "content": content},
                "parent_tool_use_id": None,
                "session_id": "qa",
            }

    client = ClaudeSDKClient()
    await client.connect(stream())
    try:
        first, second = await response(client), await response(client)
    finally:
        await client.disconnect()
    assert texts(first) == ["Hello!"] and texts(second) == ["Tokyo."]


async def test_interrupt_stops_the_running_turn_and_the_next_prompt_works(
    sdk_server: MessagesServer,
) -> None:
    """Interrupted as soon as the answer starts streaming: that response ends with an
    error_during_execution result (aborted_streaming), and the conversation goes on."""
    sdk_server.script([turn(text("1, 2, 3, 4, 5, 6, 7, 8, 9, 10 " * 20)), turn(text("A joke."))])
    sdk_server.event_delay = 0.02
    options = ClaudeAgentOptions(include_partial_messages=True)

    async with ClaudeSDKClient(options) as client:
        await client.query("Count from 1 to 100 slowly")
        interrupted: list[Message] = []
        async for message in client.receive_response():
            interrupted.append(message)
            if isinstance(message, StreamEvent) and message.event["type"] == "content_block_delta":
                if sum(isinstance(m, StreamEvent) for m in interrupted) == 4:
                    await client.interrupt()
        sdk_server.event_delay = 0.0
        await client.query("Never mind, tell me a joke")
        after = await response(client)

    result = interrupted[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert (result.subtype, result.terminal_reason) == (
        "error_during_execution",
        "aborted_streaming",
    )
    assert texts(after) == ["A joke."]
    assert "Never mind" in str(sdk_server.requests[1]["messages"])


async def test_set_permission_mode_and_set_model_between_prompts(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    """Default mode, nobody to ask: Write is refused. After acceptEdits it runs; after
    set_model the next request names the new model and still carries the conversation."""
    sdk_server.script(
        [
            turn(tool_use("Write", {"file_path": "a.txt", "content": "A"})),
            turn(text("I could not write it.")),
            turn(tool_use("Write", {"file_path": "b.txt", "content": "B"})),
            turn(text("Written.")),
            turn(text("Hello from the other model.")),
        ]
    )

    async with ClaudeSDKClient() as client:
        await client.query("write a.txt")
        refused = await response(client)
        await client.set_permission_mode("acceptEdits")
        await client.query("write b.txt")
        written = await response(client)
        await client.set_model("claude-haiku-5-5")
        await client.query("say hello")
        switched = await response(client)

    assert not (tmp_path / "a.txt").exists() and (tmp_path / "b.txt").read_text() == "B"
    denied = refused[-1]
    assert isinstance(denied, ResultMessage) and denied.permission_denials
    assert denied.permission_denials[0]["tool_name"] == "Write"
    assert isinstance(written[-1], ResultMessage) and not written[-1].permission_denials
    assert isinstance(switched[0], SystemMessage)
    assert switched[0].data["model"] == "claude-haiku-5-5"
    assert switched[0].data["permissionMode"] == "acceptEdits"
    last = sdk_server.requests[-1]
    assert last["model"] == "claude-haiku-5-5" and "write b.txt" in str(last["messages"])
    assert (
        len(
            {
                r.session_id
                for r in (denied, written[-1], switched[-1])
                if isinstance(r, ResultMessage)
            }
        )
        == 1
    )


async def test_methods_before_connect_raise_cli_connection_error() -> None:
    client = ClaudeSDKClient()
    with pytest.raises(CLIConnectionError, match="Not connected"):
        await client.query("hi")
    with pytest.raises(CLIConnectionError):
        await client.interrupt()
    with pytest.raises(CLIConnectionError):
        async for _ in client.receive_response():
            pass
    await client.disconnect()  # harmless when never connected


async def test_a_failing_model_call_reaches_the_reader(sdk_server: MessagesServer) -> None:
    """The API refuses the request: the response still ends with a result (is_error, the
    API's words in `result`), as the SDK reports a model error."""
    from queryloop.testing import http_error

    sdk_server.script([])
    sdk_server.inject(http_error(400, "invalid_request_error", "messages: bad request"))

    async with ClaudeSDKClient() as client:
        await client.query("hi")
        messages = await response(client)

    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert result.terminal_reason == "model_error" and result.subtype == "success"
    assert result.result is not None and "bad request" in result.result


async def test_background_tasks_are_reported_and_stop_task_stops_one(
    sdk_server: MessagesServer,
) -> None:
    from queryloop.claude_agent_sdk import TaskNotificationMessage, TaskStartedMessage

    sdk_server.script(
        [
            turn(tool_use("Bash", {"command": "sleep 60", "run_in_background": True})),
            turn(text("Started it.")),
            turn(text("Stopped.")),
        ]
    )
    async with ClaudeSDKClient(ClaudeAgentOptions(allowed_tools=["Bash"])) as client:
        await client.query("start a long job")
        first = await response(client)
        [started] = [m for m in first if isinstance(m, TaskStartedMessage)]
        await client.stop_task(started.task_id)
        await client.query("is it done?")
        second = await response(client)

    assert started.subtype == "task_started" and started.task_type == "local_bash"
    assert started.tool_use_id and started.data["task_id"] == started.task_id
    [ended] = [m for m in second if isinstance(m, TaskNotificationMessage)]
    assert (ended.task_id, ended.status) == (started.task_id, "stopped")


async def test_replayed_prompts_carry_the_uuid_rewind_files_takes(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    """The SDK's recipe: `extra_args={"replay-user-messages": None}` reports each prompt as
    a UserMessage with its uuid; `rewind_files(uuid)` puts the files back as they were
    before that prompt (queryloop keeps checkpoints without being asked)."""
    from queryloop.claude_agent_sdk import UnsupportedOptionError, UserMessage

    sdk_server.script(
        [
            turn(tool_use("Write", {"file_path": "notes.txt", "content": "v1"})),
            turn(text("Wrote v1.")),
            turn(tool_use("Write", {"file_path": "notes.txt", "content": "v2"})),
            turn(text("Wrote v2.")),
        ]
    )
    options = ClaudeAgentOptions(
        permission_mode="acceptEdits",
        enable_file_checkpointing=True,
        extra_args={"replay-user-messages": None},
    )
    async with ClaudeSDKClient(options) as client:
        await client.query("write v1")
        first = await response(client)
        await client.query("write v2")
        second = await response(client)
        [prompt] = [m for m in second if isinstance(m, UserMessage) and m.content == "write v2"]
        assert (tmp_path / "notes.txt").read_text() == "v2"
        assert prompt.uuid is not None
        await client.rewind_files(prompt.uuid)

    assert (tmp_path / "notes.txt").read_text() == "v1"
    assert any(isinstance(m, UserMessage) and m.content == "write v1" for m in first)
    with pytest.raises(UnsupportedOptionError, match="extra_args"):
        async with ClaudeSDKClient(ClaudeAgentOptions(extra_args={"verbose": None})):
            pass
