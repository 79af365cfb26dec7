#!/usr/bin/env python3
"""Quick start: query() with no options, with options, and with tools.

Written for the Claude Agent SDK; on queryloop only the import changed.
"""

import anyio

from queryloop.claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    TextBlock,
    query,
)


def print_text(message):
    if isinstance(message, AssistantMessage):
        for block in message.content:
            if isinstance(block, TextBlock):
                print(f"Claude: {block.text}")


async def basic_example():
    print("=== Basic ===")
    async for message in query(prompt="What is 2 + 2?"):
        print_text(message)
    print()


async def with_options_example():
    print("=== With options ===")
    options = ClaudeAgentOptions(
        system_prompt="You explain things in one short sentence.",
        max_turns=1,
    )
    async for message in query(prompt="What is Python?", options=options):
        print_text(message)
    print()


async def with_tools_example():
    print("=== With tools ===")
    options = ClaudeAgentOptions(
        allowed_tools=["Read", "Write"],
        system_prompt="You are a careful file assistant.",
    )
    async for message in query(
        prompt="Create a file called hello.txt that says 'Hello, World!'",
        options=options,
    ):
        print_text(message)
        if isinstance(message, ResultMessage) and message.total_cost_usd > 0:
            print(f"Cost: ${message.total_cost_usd:.4f}")
    print()


async def main():
    await basic_example()
    await with_options_example()
    await with_tools_example()


if __name__ == "__main__":
    anyio.run(main)
