"""A PreToolUse hook's `defer` through the Claude Agent SDK interface (issue 33, item 3): the
response ends with a `ResultMessage` whose `stop_reason` is "tool_deferred" and whose
`deferred_tool_use` is the SDK's `DeferredToolUse`; resuming the session asks the hook again
(Claude Code's round trip), and its allow runs the call once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from queryloop.claude_agent_sdk import (
    ClaudeAgentOptions,
    ClaudeSDKClient,
    DeferredToolUse,
    HookContext,
    HookMatcher,
    ResultMessage,
)
from queryloop.testing import MessagesServer, text, tool_use, turn

DEPLOY = {"command": "echo deployed >> deploy.log"}


async def result_of(options: ClaudeAgentOptions, prompt: str) -> ResultMessage:
    async with ClaudeSDKClient(options=options) as client:
        await client.query(prompt)
        messages = [m async for m in client.receive_response()]
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    return result


async def test_defer_ends_with_deferred_tool_use_and_a_resume_asks_the_hook_again(
    sdk_server: MessagesServer, tmp_path: Path
) -> None:
    asked: list[str | None] = []

    async def gate(input_data: Any, tool_use_id: str | None, context: HookContext) -> Any:
        asked.append(tool_use_id)
        decision = "allow" if (tmp_path / "approved").exists() else "defer"
        return {
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision}
        }

    sdk_server.script([turn(tool_use("Bash", DEPLOY, id="toolu_deploy")), turn(text("Deployed."))])
    hooks = {"PreToolUse": [HookMatcher(matcher="Bash", hooks=[gate])]}
    options = ClaudeAgentOptions(allowed_tools=["Bash"], hooks=hooks)

    deferred = await result_of(options, "deploy")

    assert deferred.stop_reason == "tool_deferred"
    assert deferred.deferred_tool_use == DeferredToolUse("toolu_deploy", "Bash", DEPLOY)
    assert not deferred.is_error and deferred.terminal_reason == "deferred"
    assert not (tmp_path / "deploy.log").exists()
    assert len(sdk_server.requests) == 1

    (tmp_path / "approved").write_text("yes")
    resumed = ClaudeAgentOptions(allowed_tools=["Bash"], hooks=hooks, resume=deferred.session_id)
    done = await result_of(resumed, "go on")

    assert asked == ["toolu_deploy", "toolu_deploy"]
    assert done.result == "Deployed." and done.deferred_tool_use is None
    assert (tmp_path / "deploy.log").read_text() == "deployed\n"
