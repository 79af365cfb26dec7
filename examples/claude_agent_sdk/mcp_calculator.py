#!/usr/bin/env python3
"""A calculator as an in-process MCP server: @tool functions the model calls by their MCP
names (mcp__calc__add, ...), run in this process.

Written for the Claude Agent SDK; on queryloop only the import changed.
"""

import asyncio
import math
from typing import Any

from queryloop.claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    tool,
)


def answer(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def failure(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": f"Error: {text}"}], "is_error": True}


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    return answer(f"{args['a']} + {args['b']} = {args['a'] + args['b']}")


@tool("subtract", "Subtract b from a", {"a": float, "b": float})
async def subtract(args: dict[str, Any]) -> dict[str, Any]:
    return answer(f"{args['a']} - {args['b']} = {args['a'] - args['b']}")


@tool("multiply", "Multiply two numbers", {"a": float, "b": float})
async def multiply(args: dict[str, Any]) -> dict[str, Any]:
    return answer(f"{args['a']} * {args['b']} = {args['a'] * args['b']}")


@tool("divide", "Divide a by b", {"a": float, "b": float})
async def divide(args: dict[str, Any]) -> dict[str, Any]:
    if args["b"] == 0:
        return failure("division by zero")
    return answer(f"{args['a']} / {args['b']} = {args['a'] / args['b']}")


@tool("sqrt", "Square root of n", {"n": float})
async def square_root(args: dict[str, Any]) -> dict[str, Any]:
    if args["n"] < 0:
        return failure(f"no real square root of {args['n']}")
    return answer(f"sqrt({args['n']}) = {math.sqrt(args['n'])}")


@tool("power", "base raised to exponent", {"base": float, "exponent": float})
async def power(args: dict[str, Any]) -> dict[str, Any]:
    return answer(f"{args['base']} ^ {args['exponent']} = {args['base'] ** args['exponent']}")


def show(message):
    if isinstance(message, UserMessage):
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                print(f"Tool result: {block.content}")
    elif isinstance(message, AssistantMessage):
        for block in message.content:
            if isinstance(block, TextBlock):
                print(f"Claude: {block.text}")
            elif isinstance(block, ToolUseBlock):
                print(f"Using tool: {block.name} {block.input}")
    elif isinstance(message, ResultMessage):
        print(f"Result: {message.subtype}")


async def main():
    calculator = create_sdk_mcp_server(
        name="calculator",
        version="2.0.0",
        tools=[add, subtract, multiply, divide, square_root, power],
    )
    options = ClaudeAgentOptions(
        mcp_servers={"calc": calculator},
        allowed_tools=[
            "mcp__calc__add",
            "mcp__calc__subtract",
            "mcp__calc__multiply",
            "mcp__calc__divide",
            "mcp__calc__sqrt",
            "mcp__calc__power",
        ],
    )
    for prompt in [
        "List your tools",
        "Calculate 15 + 27",
        "What is 100 divided by 0?",
        "What is 2 raised to the power of 8?",
    ]:
        print(f"--- {prompt}")
        async with ClaudeSDKClient(options=options) as client:
            await client.query(prompt)
            async for message in client.receive_response():
                show(message)


if __name__ == "__main__":
    asyncio.run(main())
