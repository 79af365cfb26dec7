"""Prompts as the SDK takes them: a string, or message dicts from an async iterable."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import Any

from .errors import MessageParseError

Prompt = str | AsyncIterable[dict[str, Any]]


async def prompt_texts(prompt: Prompt) -> AsyncIterator[str]:
    """Each user turn of `prompt` as text: the string itself, or each message dict
    (`{"type": "user", "message": {"role": "user", "content": ...}}`) in turn."""
    if isinstance(prompt, str):
        yield prompt
        return
    async for message in prompt:
        yield message_text(message)


def message_text(message: Mapping[str, Any]) -> str:
    """The text of one streamed user message; content blocks other than text (images,
    documents) cannot be given to queryloop's Agent as a prompt yet."""
    if message.get("type", "user") != "user":
        raise MessageParseError(f"only user messages can be sent, not {message.get('type')!r}")
    inner = message.get("message")
    if not isinstance(inner, Mapping):
        raise MessageParseError('a user message needs "message": {"role": "user", ...}', message)
    content = inner.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for block in content:
            if not (isinstance(block, Mapping) and block.get("type") == "text"):
                kind = block.get("type") if isinstance(block, Mapping) else type(block).__name__
                raise MessageParseError(
                    f"a prompt block of type {kind!r} cannot be sent; queryloop prompts are text",
                    message,
                )
            texts.append(str(block.get("text", "")))
        return "\n\n".join(texts)
    raise MessageParseError("message.content must be a string or a list of blocks", message)
