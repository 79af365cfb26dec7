"""Hooks (`HookMatcher` callbacks) and `can_use_tool`, with the SDK's signatures, on
queryloop's hook runner and permission checker: real Bash and Write calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from queryloop.claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookContext,
    HookMatcher,
    Message,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
    ToolResultBlock,
    UserMessage,
)
from queryloop.testing import MessagesServer, text, tool_use, turn


async def run(options: ClaudeAgentOptions, *prompts: str) -> list[list[Message]]:
    responses = []
    async with ClaudeSDKClient(options=options) as client:
        for prompt in prompts:
            await client.query(prompt)
            responses.append([m async for m in client.receive_response()])
    return responses


def tool_results(messages: list[Message]) -> list[ToolResultBlock]:
    return [
        b
        for m in messages
        if isinstance(m, UserMessage)
        for b in m.content
        if isinstance(b, ToolResultBlock)
    ]


def final(messages: list[Message]) -> ResultMessage:
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    return result


async def test_a_pre_tool_use_hook_denies_one_command_and_lets_another_run(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    calls: list[tuple[str, str | None, HookContext]] = []

    async def check_bash(input_data: Any, tool_use_id: str | None, context: HookContext) -> Any:
        calls.append((input_data["tool_input"]["command"], tool_use_id, context))
        assert input_data["hook_event_name"] == "PreToolUse" and input_data["tool_name"] == "Bash"
        if "foo.sh" in input_data["tool_input"]["command"]:
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": "Command contains invalid pattern: foo.sh",
                }
            }
        return {}

    sdk_server.script(
        [
            turn(tool_use("Bash", {"command": "./foo.sh --help > ran.txt"}, id="toolu_a")),
            turn(text("Blocked.")),
            turn(tool_use("Bash", {"command": "echo hello > echoed.txt"}, id="toolu_b")),
            turn(text("Done.")),
        ]
    )
    options = ClaudeAgentOptions(
        allowed_tools=["Bash"],
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[check_bash])]},
    )

    blocked, _allowed = await run(options, "Run ./foo.sh --help", "Run echo hello")

    assert [(c[0], c[1]) for c in calls] == [
        ("./foo.sh --help > ran.txt", "toolu_a"),
        ("echo hello > echoed.txt", "toolu_b"),
    ]
    assert calls[0][2] == {"signal": None}
    [denied] = tool_results(blocked)
    assert denied.is_error and "invalid pattern: foo.sh" in str(denied.content)
    assert not (tmp_path / "ran.txt").exists()
    assert (tmp_path / "echoed.txt").read_text() == "hello\n"
    assert final(blocked).permission_denials[0]["tool_name"] == "Bash"  # type: ignore[index]


async def test_post_tool_use_context_reaches_the_model_and_continue_false_stops(
    sdk_server: MessagesServer,
) -> None:
    async def review(input_data: Any, tool_use_id: str | None, context: HookContext) -> Any:
        if "CRITICAL" in str(input_data["tool_response"]):
            return {"continue_": False, "stopReason": "Critical error in tool output"}
        return {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "The listing looked fine.",
            }
        }

    sdk_server.script(
        [
            turn(tool_use("Bash", {"command": "echo ok"})),
            turn(text("Fine.")),
            turn(tool_use("Bash", {"command": "echo CRITICAL ERROR"})),
        ]
    )
    options = ClaudeAgentOptions(
        allowed_tools=["Bash"],
        hooks={"PostToolUse": [HookMatcher(matcher="Bash", hooks=[review])]},
    )

    fine, stopped = await run(options, "list", "fail")

    assert "The listing looked fine." in str(sdk_server.requests[1]["messages"][-1])
    assert not final(fine).is_error
    result = final(stopped)
    assert result.is_error and result.subtype == "error_during_execution"
    assert result.terminal_reason == "hook_stopped"
    assert len(sdk_server.requests) == 3  # no request after the stop


async def test_user_prompt_submit_context_and_a_wrong_return_is_reported(
    sdk_server: MessagesServer,
) -> None:
    async def favourite(input_data: Any, tool_use_id: str | None, context: HookContext) -> Any:
        assert input_data["prompt"] == "What's my favourite colour?" and tool_use_id is None
        return {
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": "My favourite colour is hot pink.",
            }
        }

    sdk_server.script([turn(text("Hot pink."))])
    options = ClaudeAgentOptions(
        hooks={"UserPromptSubmit": [HookMatcher(hooks=[favourite], timeout=5)]},
    )

    [answer] = await run(options, "What's my favourite colour?")

    assert "hot pink" in str(sdk_server.requests[0]["messages"])
    assert final(answer).result == "Hot pink."


async def test_can_use_tool_sees_the_call_and_can_change_its_input(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    asked: list[tuple[str, dict[str, Any], ToolPermissionContext]] = []

    async def decide(
        tool_name: str, input_data: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        asked.append((tool_name, input_data, context))
        if tool_name == "Write":
            redirected = {
                **input_data,
                "file_path": "./safe_output/" + Path(input_data["file_path"]).name,
            }
            return PermissionResultAllow(updated_input=redirected)
        if "rm -rf" in input_data.get("command", ""):
            return PermissionResultDeny(message="Dangerous command pattern detected: rm -rf")
        return PermissionResultAllow()

    (tmp_path / "safe_output").mkdir()
    (tmp_path / "keep").mkdir()
    sdk_server.script(
        [
            turn(
                tool_use(
                    "Write", {"file_path": "hello.py", "content": "print('hi')\n"}, id="toolu_w"
                ),
                tool_use("Bash", {"command": "rm -rf keep"}, id="toolu_rm"),
            ),
            turn(text("Done.")),
        ]
    )
    options = ClaudeAgentOptions(can_use_tool=decide, permission_mode="default")

    [messages] = await run(options, "write hello.py, then clean up")

    by_tool = {name: (input_data, context) for name, input_data, context in asked}
    write_input, write_context = by_tool["Write"]
    assert write_input["file_path"] == "hello.py" and write_context.tool_use_id == "toolu_w"
    assert write_context.decision_reason and write_context.signal is None
    [suggestion] = write_context.suggestions
    assert (suggestion.type, suggestion.behavior, suggestion.destination) == (
        "addRules",
        "allow",
        "session",
    )
    assert (tmp_path / "safe_output" / "hello.py").read_text() == "print('hi')\n"
    assert not (tmp_path / "hello.py").exists()
    assert (tmp_path / "keep").is_dir()  # the rm never ran
    denied = next(b for b in tool_results(messages) if b.tool_use_id == "toolu_rm")
    assert denied.is_error and "Dangerous command pattern detected" in str(denied.content)


async def test_a_suggested_rule_returned_is_remembered_for_the_session(
    sdk_server: MessagesServer,
) -> None:
    asked: list[str] = []

    async def approve_always(
        tool_name: str, input_data: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow:
        asked.append(input_data["command"])
        return PermissionResultAllow(updated_permissions=context.suggestions)

    sdk_server.script(
        [
            turn(tool_use("Bash", {"command": "make build"})),
            turn(text("clean")),
            turn(tool_use("Bash", {"command": "make build"})),
            turn(text("still clean")),
        ]
    )

    await run(ClaudeAgentOptions(can_use_tool=approve_always), "status?", "again?")

    assert asked == ["make build"]  # the second call matched the remembered rule


async def test_deny_with_interrupt_stops_the_turn(sdk_server: MessagesServer) -> None:
    async def stop_everything(
        tool_name: str, input_data: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultDeny:
        return PermissionResultDeny(message="Not now.", interrupt=True)

    sdk_server.script([turn(tool_use("Bash", {"command": "make deploy"}))])

    [messages] = await run(ClaudeAgentOptions(can_use_tool=stop_everything), "deploy")

    result = final(messages)
    assert result.is_error and result.subtype == "error_during_execution"
    assert result.terminal_reason in ("aborted_tools", "aborted_streaming")
    assert len(sdk_server.requests) == 1  # the model was not asked again


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits"])
async def test_permission_mode_option(
    sdk_server: MessagesServer, tmp_path: Path, mode: str
) -> None:
    sdk_server.script(
        [turn(tool_use("Write", {"file_path": "a.txt", "content": "A"})), turn(text("ok"))]
    )

    [messages] = await run(ClaudeAgentOptions(permission_mode=mode), "write")  # type: ignore[arg-type]

    assert (tmp_path / "a.txt").read_text() == "A"
    assert messages[0].data["permissionMode"] == mode  # type: ignore[union-attr]
