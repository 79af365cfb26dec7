#!/usr/bin/env python3
"""Subagents defined in code: a code reviewer, a documentation writer, and two agents
together with the user's and the project's settings.

Written for the Claude Agent SDK; on queryloop only the import changed.
"""

import anyio

from queryloop.claude_agent_sdk import (
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    TextBlock,
    query,
)


async def run(prompt, options):
    async for message in query(prompt=prompt, options=options):
        if isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextBlock):
                    print(f"Claude: {block.text}")
        elif isinstance(message, ResultMessage) and message.total_cost_usd:
            print(f"Cost: ${message.total_cost_usd:.4f}")
    print()


async def code_reviewer_example():
    print("=== Code reviewer ===")
    options = ClaudeAgentOptions(
        agents={
            "code-reviewer": AgentDefinition(
                description="Reviews code for bugs, security issues and style",
                prompt="You are a code reviewer. Report the most important finding.",
                tools=["Read", "Grep"],
                model="sonnet",
            ),
        },
    )
    await run("Use the code-reviewer agent to review app.py", options)


async def documentation_writer_example():
    print("=== Documentation writer ===")
    options = ClaudeAgentOptions(
        agents={
            "doc-writer": AgentDefinition(
                description="Writes clear documentation with examples",
                prompt="You are a technical writer. Be clear and brief.",
                tools=["Read", "Write", "Edit"],
                model="sonnet",
            ),
        },
    )
    await run("Use the doc-writer agent to explain what AgentDefinition is for", options)


async def multiple_agents_example():
    print("=== Two agents ===")
    options = ClaudeAgentOptions(
        agents={
            "analyzer": AgentDefinition(
                description="Analyzes code structure",
                prompt="You are a code analyzer.",
                tools=["Read", "Grep", "Glob"],
            ),
            "tester": AgentDefinition(
                description="Writes and runs tests",
                prompt="You are a testing expert.",
                tools=["Read", "Write", "Bash"],
                model="sonnet",
            ),
        },
        setting_sources=["user", "project"],
    )
    await run("Use the analyzer agent to find the Python files here", options)


async def main():
    await code_reviewer_example()
    await documentation_writer_example()
    await multiple_agents_example()


if __name__ == "__main__":
    anyio.run(main)
