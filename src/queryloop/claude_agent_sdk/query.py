"""`query()`: one conversation, from the prompts given up front to the last result."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from .conversation import Conversation
from .errors import ResultError, UnsupportedOptionError
from .messages import Message, ResultMessage
from .options import ClaudeAgentOptions
from .prompts import Prompt, prompt_texts


async def query(
    *,
    prompt: Prompt,
    options: ClaudeAgentOptions | None = None,
    transport: Any = None,
) -> AsyncIterator[Message]:
    """Run `prompt` on a new queryloop Agent and yield its messages.

    `prompt` is a string, or an async iterable of user message dicts, each run as the next
    turn of the same conversation. Each turn yields a `SystemMessage` "init", the
    response's messages and a `ResultMessage`. As with the SDK, when the last result is an
    error (`is_error`), `ResultError` is raised after it was yielded. The Agent is closed
    at the end (SessionEnd hooks, MCP servers stopped).

        async for message in query(prompt="What is 2 + 2?"):
            print(message)
    """
    if transport is not None:
        raise UnsupportedOptionError("transport", "queryloop runs no CLI to talk to")
    conversation = Conversation(options or ClaudeAgentOptions())
    await conversation.open()
    last: ResultMessage | None = None
    try:
        async for text in prompt_texts(prompt):
            async for message in conversation.run(text):
                if isinstance(message, ResultMessage):
                    last = message
                yield message
    finally:
        await conversation.close()
    if last is not None and last.is_error:
        raise ResultError(f"the run ended with an error result: {_why(last)}", _data(last))


def _why(result: ResultMessage) -> str:
    """The SDK's choice of words: `errors`, then `result`, then the subtype."""
    return "; ".join(result.errors or []) or result.result or result.subtype


def _data(result: ResultMessage) -> dict[str, Any]:
    return {"type": "result", **{k: v for k, v in vars(result).items() if v is not None}}
