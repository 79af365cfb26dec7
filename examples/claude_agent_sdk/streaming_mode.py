#!/usr/bin/env python3
"""ClaudeSDKClient patterns: a response, a conversation, sending while receiving, an
interrupt, reading the stream by hand, options, a stream of prompts, tool calls, server
info, and error handling.

Usage: python streaming_mode.py [all | <example name>]

Written for the Claude Agent SDK; on queryloop only the import changed.
"""

import asyncio
import contextlib
import sys

from queryloop.claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    CLIConnectionError,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)


def show(message):
    if isinstance(message, UserMessage):
        for block in message.content:
            if isinstance(block, TextBlock):
                print(f"User: {block.text}")
    elif isinstance(message, AssistantMessage):
        for block in message.content:
            if isinstance(block, TextBlock):
                print(f"Claude: {block.text}")
    elif isinstance(message, SystemMessage):
        pass
    elif isinstance(message, ResultMessage):
        print(f"Result: {message.subtype}")


async def example_basic_streaming():
    async with ClaudeSDKClient() as client:
        await client.query("What is 2+2?")
        async for message in client.receive_response():
            show(message)


async def example_multi_turn_conversation():
    async with ClaudeSDKClient() as client:
        await client.query("What's the capital of France?")
        async for message in client.receive_response():
            show(message)
        await client.query("What's the population of that city?")
        async for message in client.receive_response():
            show(message)


async def example_concurrent_responses():
    questions = ["What is 2 + 2?", "What is the square root of 144?", "What is 10% of 80?"]
    async with ClaudeSDKClient() as client:

        async def receive():
            results = 0
            async for message in client.receive_messages():
                show(message)
                results += isinstance(message, ResultMessage)
                if results == len(questions):
                    return

        receiver = asyncio.create_task(receive())
        for question in questions:
            print(f"User: {question}")
            await client.query(question)
        await receiver


async def example_with_interrupt():
    options = ClaudeAgentOptions(allowed_tools=["Bash"])
    async with ClaudeSDKClient(options) as client:
        await client.query("Count from 1 to 100 slowly, sleeping between numbers")
        started = asyncio.Event()
        received = []

        async def consume():
            async for message in client.receive_response():
                received.append(message)
                show(message)
                if isinstance(message, AssistantMessage):
                    started.set()

        consumer = asyncio.create_task(consume())
        await started.wait()
        print("[interrupting]")
        await client.interrupt()
        await consumer
        print(f"Interrupted turn ended: {received[-1].subtype}")

        await client.query("Never mind, just tell me a quick joke")
        async for message in client.receive_response():
            show(message)


async def example_manual_message_handling():
    languages = []
    async with ClaudeSDKClient() as client:
        await client.query("List 5 programming languages and their main use cases")
        async for message in client.receive_messages():
            if isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextBlock):
                        for name in ("Python", "JavaScript", "Java", "Go", "Rust"):
                            if name in block.text and name not in languages:
                                languages.append(name)
            elif isinstance(message, ResultMessage):
                print(f"Languages mentioned: {', '.join(languages)}")
                break


async def example_with_options():
    options = ClaudeAgentOptions(
        allowed_tools=["Read", "Write"],
        system_prompt="You are a helpful coding assistant.",
        env={"GREETING": "hello"},
    )
    async with ClaudeSDKClient(options=options) as client:
        await client.query("Create a hello.txt file with a greeting")
        tools_used = []
        async for message in client.receive_response():
            show(message)
            if isinstance(message, AssistantMessage):
                tools_used += [b.name for b in message.content if isinstance(b, ToolUseBlock)]
        print(f"Tools used: {', '.join(tools_used)}")


async def example_async_iterable_prompt():
    async def messages():
        for text in ("Hello! I have two questions.", "What's the capital of Japan?"):
            print(f"User: {text}")
            yield {
                "type": "user",
                "message": {"role": "user", "content": text},
                "parent_tool_use_id": None,
                "session_id": "qa-session",
            }

    async with ClaudeSDKClient() as client:
        await client.query(messages())
        for _ in range(2):
            async for message in client.receive_response():
                show(message)


async def example_bash_command():
    options = ClaudeAgentOptions(allowed_tools=["Bash"])
    async with ClaudeSDKClient(options) as client:
        await client.query("Run a bash echo command that says 'Hello from bash!'")
        kinds = []
        async for message in client.receive_messages():
            kinds.append(type(message).__name__)
            if isinstance(message, UserMessage):
                for block in message.content:
                    if isinstance(block, ToolResultBlock):
                        print(f"Tool result ({block.tool_use_id}): {block.content}")
            elif isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, ToolUseBlock) and block.name == "Bash":
                        print(f"Command: {block.input.get('command')}")
            elif isinstance(message, ResultMessage):
                break
        print(f"Message types: {', '.join(sorted(set(kinds)))}")


async def example_control_protocol():
    async with ClaudeSDKClient() as client:
        info = await client.get_server_info()
        print(f"Commands available: {len(info.get('slash_commands', []))}")
        print(f"Output style: {info.get('output_style')}")
        await client.query("Just say 'Hello!'")
        async for message in client.receive_response():
            show(message)


async def example_error_handling():
    client = ClaudeSDKClient()
    try:
        await client.connect()
        await client.query("Run a bash sleep command for 5 seconds")
        try:
            async with asyncio.timeout(20.0):
                async for message in client.receive_response():
                    show(message)
        except TimeoutError:
            print("No answer in time")
    except CLIConnectionError as error:
        print(f"Connection error: {error}")
    finally:
        await client.disconnect()


EXAMPLES = {
    "basic_streaming": example_basic_streaming,
    "multi_turn_conversation": example_multi_turn_conversation,
    "concurrent_responses": example_concurrent_responses,
    "with_interrupt": example_with_interrupt,
    "manual_message_handling": example_manual_message_handling,
    "with_options": example_with_options,
    "async_iterable_prompt": example_async_iterable_prompt,
    "bash_command": example_bash_command,
    "control_protocol": example_control_protocol,
    "error_handling": example_error_handling,
}


async def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "all"
    chosen = EXAMPLES.items() if name == "all" else [(name, EXAMPLES[name])]
    for title, example in chosen:
        print(f"=== {title} ===")
        await example()
        print()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())
