#!/usr/bin/env python3
"""Hooks as Python callbacks: block a command, add context to a prompt, review a tool's
output, decide a permission, stop the agent.

Usage: python hooks.py [all | PreToolUse | UserPromptSubmit | PostToolUse |
                        DecisionFields | ContinueControl]

Written for the Claude Agent SDK; on queryloop only the import changed.
"""

import asyncio
import sys

from queryloop.claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient
from queryloop.claude_agent_sdk.types import (
    AssistantMessage,
    HookContext,
    HookInput,
    HookJSONOutput,
    HookMatcher,
    Message,
    ResultMessage,
    TextBlock,
)


def show(message: Message) -> None:
    if isinstance(message, AssistantMessage):
        for block in message.content:
            if isinstance(block, TextBlock):
                print(f"Claude: {block.text}")
    elif isinstance(message, ResultMessage):
        print(f"Result: {message.subtype}")


async def block_bad_scripts(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    command = input_data["tool_input"].get("command", "")
    if "foo.sh" in command:
        print(f"Hook: blocked {command!r}")
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "Command contains invalid pattern: foo.sh",
            }
        }
    return {}


async def remember_colour(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    return {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "My favorite color is hot pink",
        }
    }


async def review_output(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    if "error" in str(input_data.get("tool_response", "")).lower():
        print("Hook: the command failed")
        return {
            "systemMessage": "The command produced an error",
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "The command failed; try another approach.",
            },
        }
    return {}


async def guard_important_files(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    path = input_data.get("tool_input", {}).get("file_path", "")
    if "important" in path.lower():
        print(f"Hook: refused a write to {path}")
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "Writes to important files are not allowed",
            },
        }
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "Passed the review",
        },
    }


async def stop_on_critical(
    input_data: HookInput, tool_use_id: str | None, context: HookContext
) -> HookJSONOutput:
    if "critical" in str(input_data.get("tool_response", "")).lower():
        print("Hook: critical output, stopping")
        return {"continue_": False, "stopReason": "Critical error in the tool's output"}
    return {"continue_": True}


async def converse(options: ClaudeAgentOptions, *prompts: str) -> None:
    async with ClaudeSDKClient(options=options) as client:
        for prompt in prompts:
            print(f"User: {prompt}")
            await client.query(prompt)
            async for message in client.receive_response():
                show(message)


async def example_pretooluse() -> None:
    print("=== PreToolUse ===")
    options = ClaudeAgentOptions(
        allowed_tools=["Bash"],
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[block_bad_scripts])]},
    )
    await converse(
        options,
        "Run the bash command: ./foo.sh --help",
        "Run the bash command: echo 'Hello from hooks!'",
    )


async def example_userpromptsubmit() -> None:
    print("=== UserPromptSubmit ===")
    options = ClaudeAgentOptions(
        hooks={"UserPromptSubmit": [HookMatcher(matcher=None, hooks=[remember_colour])]}
    )
    await converse(options, "What's my favorite color?")


async def example_posttooluse() -> None:
    print("=== PostToolUse ===")
    options = ClaudeAgentOptions(
        allowed_tools=["Bash"],
        hooks={"PostToolUse": [HookMatcher(matcher="Bash", hooks=[review_output])]},
    )
    await converse(options, "Run this command: echo 'error: disk almost full'")


async def example_decision_fields() -> None:
    print("=== Permission decisions ===")
    options = ClaudeAgentOptions(
        allowed_tools=["Write", "Bash"],
        hooks={"PreToolUse": [HookMatcher(matcher="Write", hooks=[guard_important_files])]},
    )
    await converse(
        options,
        "Write 'test data' to important_config.txt",
        "Write 'test data' to regular_file.txt",
    )


async def example_continue_control() -> None:
    print("=== Continue / stop ===")
    options = ClaudeAgentOptions(
        allowed_tools=["Bash"],
        hooks={"PostToolUse": [HookMatcher(matcher="Bash", hooks=[stop_on_critical])]},
    )
    await converse(options, "Run: echo 'CRITICAL ERROR: system failure'")


EXAMPLES = {
    "PreToolUse": example_pretooluse,
    "UserPromptSubmit": example_userpromptsubmit,
    "PostToolUse": example_posttooluse,
    "DecisionFields": example_decision_fields,
    "ContinueControl": example_continue_control,
}


async def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "all"
    chosen = EXAMPLES.values() if name == "all" else [EXAMPLES[name]]
    for example in chosen:
        await example()
        print()


if __name__ == "__main__":
    asyncio.run(main())
