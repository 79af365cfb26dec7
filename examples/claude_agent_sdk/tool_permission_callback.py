#!/usr/bin/env python3
"""A permission callback: allow reads, refuse writes to system folders, redirect other
writes into ./safe_output, refuse dangerous commands, and log every request.

Written for the Claude Agent SDK; on queryloop only the import changed.
"""

import asyncio
import json

from queryloop.claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    TextBlock,
    ToolPermissionContext,
)

requests_seen = []


async def decide(
    tool_name: str, input_data: dict, context: ToolPermissionContext
) -> PermissionResultAllow | PermissionResultDeny:
    requests_seen.append(
        {"tool": tool_name, "input": input_data, "suggestions": context.suggestions}
    )
    print(f"Permission request: {tool_name} {json.dumps(input_data)}")

    if tool_name in ("Read", "Glob", "Grep"):
        return PermissionResultAllow()

    if tool_name in ("Write", "Edit", "MultiEdit"):
        path = input_data.get("file_path", "")
        if path.startswith(("/etc/", "/usr/")):
            return PermissionResultDeny(message=f"Cannot write to system directory: {path}")
        if not path.startswith(("/tmp/", "./")):
            safe = f"./safe_output/{path.split('/')[-1]}"
            print(f"  redirecting {path} to {safe}")
            return PermissionResultAllow(updated_input={**input_data, "file_path": safe})

    if tool_name == "Bash":
        command = input_data.get("command", "")
        for pattern in ("rm -rf", "sudo", "chmod 777", "dd if=", "mkfs"):
            if pattern in command:
                return PermissionResultDeny(message=f"Dangerous command pattern: {pattern}")
        return PermissionResultAllow()

    return PermissionResultDeny(message=f"{tool_name} is not on this program's list")


async def main():
    options = ClaudeAgentOptions(can_use_tool=decide, permission_mode="default", cwd=".")
    async with ClaudeSDKClient(options) as client:
        await client.query(
            "1. List the files here\n2. Create a hello world script at hello.py\n3. Run it"
        )
        async for message in client.receive_response():
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextBlock):
                        print(f"Claude: {block.text}")
            elif isinstance(message, ResultMessage):
                print(f"Done in {message.duration_ms} ms, {message.num_turns} turns")

    print(f"{len(requests_seen)} permission requests:")
    for request in requests_seen:
        print(f"  {request['tool']}: {json.dumps(request['input'])}")


if __name__ == "__main__":
    asyncio.run(main())
