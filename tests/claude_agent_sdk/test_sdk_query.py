"""`query()`: one conversation from prompts given up front, on a queryloop Agent, against
the local Messages API server (real HTTP, the official `anthropic` client underneath)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from queryloop.claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    Message,
    ResultError,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UnsupportedOptionError,
    UserMessage,
    query,
)
from queryloop.claude_agent_sdk.mapping import plan_agent
from queryloop.context.system_prompt import DEFAULT_STATIC_PREFIX
from queryloop.testing import MessagesServer, server_error, text, thinking, tool_use, turn


async def collect(prompt: Any, options: ClaudeAgentOptions | None = None) -> list[Message]:
    return [m async for m in query(prompt=prompt, options=options)]


def system_texts(body: dict[str, Any]) -> list[str]:
    return [block["text"] for block in body.get("system", [])]


async def test_the_import_works_and_a_string_prompt_yields_init_answer_and_result(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    sdk_server.script([turn(text("2 + 2 = 4"))])

    messages = await collect("What is 2 + 2?")

    init, answer, result = messages
    assert isinstance(init, SystemMessage) and init.subtype == "init"
    assert init.data["cwd"] == str(tmp_path) and "Read" in init.data["tools"]
    assert init.data["permissionMode"] == "default"
    assert isinstance(answer, AssistantMessage) and answer.content == [TextBlock("2 + 2 = 4")]
    assert answer.model == "claude-sonnet-5-5" and answer.stop_reason == "end_turn"
    assert answer.usage is not None and answer.usage["output_tokens"] > 0
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.is_error, result.result) == ("success", False, "2 + 2 = 4")
    assert result.num_turns == 1 and result.session_id == init.data["session_id"]
    assert answer.session_id == result.session_id
    assert result.total_cost_usd is not None and result.total_cost_usd > 0
    assert (
        result.usage is not None and result.usage["output_tokens"] == answer.usage["output_tokens"]
    )
    assert result.duration_ms >= result.duration_api_ms >= 0
    assert result.terminal_reason == "completed" and result.stop_reason == "end_turn"
    [body] = sdk_server.requests
    assert body["messages"][-1]["content"][-1]["text"] == "What is 2 + 2?"


async def test_tool_calls_and_their_results_are_reported_and_the_tool_really_ran(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("ship on Friday\n")
    sdk_server.script(
        [turn(tool_use("Read", {"file_path": "notes.txt"}, id="toolu_read")), turn(text("Friday."))]
    )

    messages = await collect("When do we ship?", ClaudeAgentOptions(allowed_tools=["Read"]))

    kinds = [type(m).__name__ for m in messages]
    assert kinds == [
        "SystemMessage",
        "AssistantMessage",
        "UserMessage",
        "AssistantMessage",
        "ResultMessage",
    ]
    call, results = messages[1], messages[2]
    assert isinstance(call, AssistantMessage) and isinstance(results, UserMessage)
    assert call.content == [ToolUseBlock("toolu_read", "Read", {"file_path": "notes.txt"})]
    assert not isinstance(results.content, str)
    [block] = results.content
    assert isinstance(block, ToolResultBlock) and block.tool_use_id == "toolu_read"
    assert "ship on Friday" in str(block.content) and not block.is_error
    result = messages[-1]
    assert isinstance(result, ResultMessage) and result.num_turns == 2


@pytest.mark.parametrize(
    ("system_prompt", "expected"),
    [
        (None, []),
        ("You are a pirate.", ["You are a pirate."]),
        ({"type": "preset", "preset": "claude_code"}, [DEFAULT_STATIC_PREFIX]),
        (
            {"type": "preset", "preset": "claude_code", "append": "End with a fun fact."},
            [DEFAULT_STATIC_PREFIX, "End with a fun fact."],
        ),
    ],
)
async def test_system_prompt_none_string_preset_and_append(
    sdk_server: MessagesServer, system_prompt: Any, expected: list[str]
) -> None:
    """None: none of queryloop's instructions (the SDK's empty prompt); a string replaces
    them; the preset is queryloop's own, `append` goes after. The environment section
    (working folder, platform, model) is always there."""
    sdk_server.script([turn(text("ok"))])

    await collect("hi", ClaudeAgentOptions(system_prompt=system_prompt))

    texts = system_texts(sdk_server.requests[0])
    environment = [t for t in texts if t.startswith("# Environment")]
    assert len(environment) == 1
    assert [t for t in texts if t not in environment] == expected


async def test_system_prompt_from_a_file(sdk_server: MessagesServer, tmp_path: Path) -> None:
    (tmp_path / "prompt.md").write_text("You review contracts.")
    sdk_server.script([turn(text("ok"))])

    await collect("hi", ClaudeAgentOptions(system_prompt={"type": "file", "path": "prompt.md"}))

    assert "You review contracts." in system_texts(sdk_server.requests[0])


async def test_model_thinking_and_the_tools_list(sdk_server: MessagesServer) -> None:
    sdk_server.script([turn(thinking("Two and two.", signature="sig"), text("4"))])
    options = ClaudeAgentOptions(
        model="claude-opus-5-5",
        tools=["Read", "Grep"],
        max_thinking_tokens=2048,
    )

    messages = await collect("2+2?", options)

    [body] = sdk_server.requests
    assert body["model"] == "claude-opus-5-5"
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    names = [t["name"] for t in body["tools"]]
    assert "Read" in names and "Grep" in names and "Bash" not in names and "Write" not in names
    # one AssistantMessage per content block, sharing the response's id (as Claude Code)
    parts = [m for m in messages if isinstance(m, AssistantMessage)]
    assert [type(b).__name__ for m in parts for b in m.content] == ["ThinkingBlock", "TextBlock"]
    assert len({m.message_id for m in parts}) == 1


async def test_max_turns_ends_with_error_max_turns_then_raises_result_error(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    """As with the SDK: the error result is yielded first, then `ResultError` carries it."""
    (tmp_path / "a.txt").write_text("a")
    sdk_server.script([turn(tool_use("Read", {"file_path": "a.txt"}))])
    seen: list[Message] = []

    with pytest.raises(ResultError) as caught:
        async for message in query(
            prompt="read a.txt", options=ClaudeAgentOptions(max_turns=1, allowed_tools=["Read"])
        ):
            seen.append(message)

    result = seen[-1]
    assert isinstance(result, ResultMessage) and result.is_error
    assert (result.subtype, result.terminal_reason) == ("error_max_turns", "max_turns")
    error = caught.value
    assert (error.subtype, error.terminal_reason, error.exit_code) == (
        "error_max_turns",
        "max_turns",
        1,
    )
    assert error.session_id == result.session_id
    assert len(sdk_server.requests) == 1


async def test_an_async_iterable_prompt_runs_each_message_as_a_turn_of_one_session(
    sdk_server: MessagesServer,
) -> None:
    sdk_server.script([turn(text("Tokyo.")), turn(text("30."))])

    async def prompts() -> AsyncIterator[dict[str, Any]]:
        yield {"type": "user", "message": {"role": "user", "content": "Capital of Japan?"}}
        yield {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": "15% of 200?"}]},
            "parent_tool_use_id": None,
            "session_id": "qa",
        }

    messages = await collect(prompts())

    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert [r.result for r in results] == ["Tokyo.", "30."]
    assert results[0].session_id == results[1].session_id
    second = sdk_server.requests[1]["messages"]
    assert "Capital of Japan?" in str(second) and "Tokyo." in str(second)
    assert results[1].total_cost_usd is not None and results[0].total_cost_usd is not None
    assert results[1].total_cost_usd > results[0].total_cost_usd  # totals since the start


async def test_partial_messages_are_the_api_stream_events(sdk_server: MessagesServer) -> None:
    sdk_server.script([turn(text("Hello there"), tool_use("Read", {"file_path": "x"}))])

    messages: list[Message] = []
    stream: list[StreamEvent] = []
    with pytest.raises(ResultError):  # max_turns=1 and a tool call: error_max_turns
        async for message in query(
            prompt="hi",
            options=ClaudeAgentOptions(include_partial_messages=True, max_turns=1),
        ):
            messages.append(message)
            if isinstance(message, StreamEvent):
                stream.append(message)

    kinds = [e.event["type"] for e in stream]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds.count("content_block_start") == kinds.count("content_block_stop") == 2
    deltas = [e.event["delta"] for e in stream if e.event["type"] == "content_block_delta"]
    assert "".join(d["text"] for d in deltas if d["type"] == "text_delta") == "Hello there"
    arguments = "".join(d["partial_json"] for d in deltas if d["type"] == "input_json_delta")
    assert arguments.replace(" ", "") == '{"file_path":"x"}'
    starts = [e.event["content_block"] for e in stream if e.event["type"] == "content_block_start"]
    assert starts[1]["type"] == "tool_use" and starts[1]["name"] == "Read"
    # the stream events come before the whole message they make up
    first_whole = next(i for i, m in enumerate(messages) if isinstance(m, AssistantMessage))
    assert all(isinstance(m, StreamEvent | SystemMessage) for m in messages[:first_whole])


async def test_resume_and_continue_conversation_pick_up_the_session(
    sdk_server: MessagesServer,
) -> None:
    sdk_server.script([turn(text("Noted: 42.")), turn(text("It was 42.")), turn(text("42!"))])
    first = await collect("Remember 42.")
    session_id = first[-1].session_id  # type: ignore[union-attr]

    resumed = await collect("What was it?", ClaudeAgentOptions(resume=session_id))
    continued = await collect("Again?", ClaudeAgentOptions(continue_conversation=True))

    assert resumed[-1].session_id == continued[-1].session_id == session_id  # type: ignore[union-attr]
    assert "Remember 42." in str(sdk_server.requests[1]["messages"])
    assert "It was 42." in str(sdk_server.requests[2]["messages"])


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (ClaudeAgentOptions(cli_path="/usr/bin/claude"), "cli_path"),
        (ClaudeAgentOptions(permission_mode="dontAsk"), "permission_mode='dontAsk'"),  # type: ignore[arg-type]
        (ClaudeAgentOptions(effort="high"), "effort"),
        (ClaudeAgentOptions(output_format={"type": "json"}), "output_format"),
        (ClaudeAgentOptions(resume="x", continue_conversation=True), "continue_conversation"),
        (ClaudeAgentOptions(hooks={"Setup": []}), "hooks['Setup']"),
    ],
)
async def test_an_option_queryloop_cannot_honour_is_an_error_naming_it(
    sdk_server: MessagesServer, options: ClaudeAgentOptions, named: str
) -> None:
    with pytest.raises(UnsupportedOptionError) as caught:
        await collect("hi", options)

    assert f"ClaudeAgentOptions.{named} is not supported" in str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert sdk_server.requests == []  # refused before anything ran


async def test_setting_sources_choose_the_files_read(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    """None reads every scope (the SDK's default); [] none (its isolation mode). The user's
    command and memory file show whether the user's files were read."""
    import os

    home = Path(os.environ["QUERYLOOP_HOME"])
    (home / "commands").mkdir(parents=True)
    (home / "commands" / "greet.md").write_text("Say hello.\n")
    (home / "QUERYLOOP.md").write_text("USER MEMORY: be brief.\n")
    sdk_server.script([turn(text("a")), turn(text("b")), turn(text("c"))])

    default = await collect("hi")
    isolated = await collect("hi", ClaudeAgentOptions(setting_sources=[]))
    user = await collect("hi", ClaudeAgentOptions(setting_sources=["user"]))

    commands = [m[0].data["slash_commands"] for m in (default, isolated, user)]  # type: ignore[union-attr]
    assert ["greet" in c for c in commands] == [True, False, True]
    sent = [str(body["messages"]) for body in sdk_server.requests]
    assert ["USER MEMORY" in s for s in sent] == [True, False, True]


async def test_max_budget_usd_stops_the_run_once_the_cost_reaches_it(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    """Checked after each model response: the first one already costs more than the budget,
    so its tool call does not lead to another request."""
    (tmp_path / "README.md").write_text("# readme\n")
    sdk_server.script([turn(tool_use("Read", {"file_path": "README.md"})), turn(text("never"))])
    seen: list[Message] = []

    with pytest.raises(ResultError) as caught:
        async for message in query(
            prompt="Summarize README.md", options=ClaudeAgentOptions(max_budget_usd=0.0001)
        ):
            seen.append(message)

    result = seen[-1]
    assert isinstance(result, ResultMessage) and result.subtype == "error_max_budget_usd"
    assert result.total_cost_usd is not None and result.total_cost_usd >= 0.0001
    assert caught.value.subtype == "error_max_budget_usd"
    # Claude Code's words for the cause, not those of the interruption that stopped the turn.
    assert result.errors == ["Exceeded USD budget (0.0001)"] == caught.value.errors
    assert "Exceeded USD budget" in str(caught.value) and "nterrupt" not in str(caught.value)
    assert len(sdk_server.requests) == 1


async def test_env_and_add_dirs_reach_the_tools(sdk_server: MessagesServer, tmp_path: Path) -> None:
    shared = tmp_path.parent / f"{tmp_path.name}-shared"
    shared.mkdir()
    (shared / "spec.md").write_text("the shared spec\n")
    sdk_server.script(
        [
            turn(
                tool_use("Bash", {"command": "echo $GREETING"}),
                tool_use("Read", {"file_path": str(shared / "spec.md")}),
            ),
            turn(text("ok")),
        ]
    )
    options = ClaudeAgentOptions(
        env={"GREETING": "hello from env"}, add_dirs=[shared], allowed_tools=["Bash(echo:*)"]
    )

    messages = await collect("greet and read", options)

    results = [b for m in messages if isinstance(m, UserMessage) for b in m.content]
    contents = [str(b.content) for b in results if isinstance(b, ToolResultBlock)]
    assert "hello from env" in contents[0] and "the shared spec" in contents[1]


async def test_a_retried_request_is_reported_as_an_api_retry_system_message(
    sdk_server: MessagesServer,
) -> None:
    sdk_server.inject(server_error(529))
    sdk_server.script([turn(text("after a retry"))])

    messages = await collect("hello")

    retries = [m for m in messages if isinstance(m, SystemMessage) and m.subtype == "api_retry"]
    assert len(retries) == 1
    data = retries[0].data
    assert data["attempt"] == 1 and data["max_retries"] >= 1 and data["error_status"] == 529
    assert data["retry_delay_ms"] >= 0 and data["session_id"]
    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "after a retry"
    assert len(sdk_server.requests) == 2


async def test_stderr_receives_what_the_cli_would_print_there(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    """An ignored settings key is a notice: the CLI prints it on stderr, so the callback
    gets it, a line at a time."""
    (tmp_path / ".queryloop").mkdir()
    (tmp_path / ".queryloop" / "settings.json").write_text('{"colour": "blue"}')
    sdk_server.script([turn(text("4"))])
    lines: list[str] = []

    messages = await collect("What is 2+2?", ClaudeAgentOptions(stderr=lines.append))

    assert isinstance(messages[-1], ResultMessage) and messages[-1].result == "4"
    assert any("colour" in line for line in lines), lines
    assert all("\n" not in line for line in lines)


async def test_naming_the_project_in_setting_sources_trusts_its_folder(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    """The SDK's setting_sources example: a project command is offered when the code asks
    for the project's files; by default an untrusted folder's files stay unread (a notice)."""
    (tmp_path / ".claude" / "commands").mkdir(parents=True)
    (tmp_path / ".claude" / "commands" / "commit.md").write_text("Commit the staged work.\n")
    sdk_server.script([turn(text("a")), turn(text("b"))])
    notices: list[str] = []

    default = await collect("hi", ClaudeAgentOptions(stderr=notices.append))
    project = await collect("hi", ClaudeAgentOptions(setting_sources=["project"]))

    commands = [m[0].data["slash_commands"] for m in (default, project)]  # type: ignore[union-attr]
    assert ["commit" in c for c in commands] == [False, True]
    assert any("trust" in line for line in notices), notices


def test_an_sse_mcp_server_is_passed_on_like_an_http_one() -> None:
    sse = {"type": "sse", "url": "http://127.0.0.1:1/sse", "headers": {"X-Key": "k"}}
    plan = plan_agent(ClaudeAgentOptions(mcp_servers={"old": sse}))  # type: ignore[dict-item]
    assert plan.kwargs["mcp_servers"] == {"old": sse}
