#!/usr/bin/env python3
"""The Claude Agent SDK README's snippets, one after another: query() with and without
options, tools, a working directory, an in-process tool with ClaudeSDKClient, in-process
and external MCP servers together, a hook, and error handling.

Written for the Claude Agent SDK; on queryloop only the import changed.
"""

import sys
from pathlib import Path

import anyio

from queryloop.claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ClaudeSDKError,
    CLIConnectionError,
    CLIJSONDecodeError,
    CLINotFoundError,
    HookMatcher,
    ProcessError,
    ResultError,
    TextBlock,
    create_sdk_mcp_server,
    query,
    tool,
)


@tool("greet", "Greet a user", {"name": str})
async def greet_user(args):
    return {"content": [{"type": "text", "text": f"Hello, {args['name']}!"}]}


async def check_bash_command(input_data, tool_use_id, context):
    if input_data["tool_name"] != "Bash":
        return {}
    if "foo.sh" in input_data["tool_input"].get("command", ""):
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "Command contains invalid pattern: foo.sh",
            }
        }
    return {}


async def quick_start():
    async for message in query(prompt="What is 2 + 2?"):
        print(message)


async def basic_usage():
    async for message in query(prompt="Hello Claude"):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextBlock):
                    print(block.text)
    options = ClaudeAgentOptions(system_prompt="You are a helpful assistant", max_turns=1)
    async for message in query(prompt="Tell me a joke", options=options):
        print(message)


async def using_tools():
    options = ClaudeAgentOptions(
        allowed_tools=["Read", "Write", "Bash"], permission_mode="acceptEdits"
    )
    async for _message in query(prompt="Create a hello.py file", options=options):
        pass


async def working_directory():
    options = ClaudeAgentOptions(cwd=Path.cwd() / "project")
    async for message in query(prompt="Where am I?", options=options):
        print(message)


async def custom_tools():
    server = create_sdk_mcp_server(name="my-tools", version="1.0.0", tools=[greet_user])
    options = ClaudeAgentOptions(mcp_servers={"tools": server}, allowed_tools=["mcp__tools__greet"])
    async with ClaudeSDKClient(options=options) as client:
        await client.query("Greet Alice")
        async for msg in client.receive_response():
            print(msg)


async def mixed_servers():
    """In-process and external servers together (the external one: argv[1], a stdio server)."""
    server = create_sdk_mcp_server(name="my-tools", tools=[greet_user])
    options = ClaudeAgentOptions(
        mcp_servers={
            "internal": server,
            "external": {"type": "stdio", "command": sys.executable, "args": [sys.argv[1]]},
        }
    )
    async with ClaudeSDKClient(options=options) as client:
        info = await client.get_server_info()
        print("MCP servers:", [s["name"] for s in info["mcp_servers"]])


async def hooks():
    options = ClaudeAgentOptions(
        allowed_tools=["Bash"],
        hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[check_bash_command])]},
    )
    async with ClaudeSDKClient(options=options) as client:
        await client.query("Run the bash command: ./foo.sh --help")
        async for msg in client.receive_response():
            print(msg)
        await client.query("Run the bash command: echo 'Hello from hooks example!'")
        async for msg in client.receive_response():
            print(msg)


async def error_handling():
    try:
        async for _message in query(prompt="Hello", options=ClaudeAgentOptions(max_turns=1)):
            pass
    except CLINotFoundError:
        print("Please install Claude Code")
    except ResultError as e:
        print(f"Run failed: {e.subtype=} {e.terminal_reason=} {e.api_error_status=}")
    except ProcessError as e:
        print(f"Process failed with exit code: {e.exit_code}")
    except CLIJSONDecodeError as e:
        print(f"Failed to parse response: {e}")
    except (ClaudeSDKError, CLIConnectionError) as e:
        print(f"SDK error: {e}")


async def main():
    for section in (quick_start, basic_usage, using_tools, working_directory, custom_tools,
                    mixed_servers, hooks, error_handling):  # fmt: skip
        await section()


anyio.run(main)
