"""Glue for the loop: a `Summarize` callable from a provider and a request builder.

The compaction request must be the session's normal request with the compact instruction
appended as the last user message, so it reads the cached prefix (tools, system and history
byte-identical). `queryloop.context.RequestBuilder.build_compaction_request` builds exactly
that; pass it as `build`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..abort import AbortSignal
from ..messages.blocks import TextBlock
from ..messages.types import Message
from ..providers.base import ModelProvider, ModelRequest, complete
from .autocompact import Summarize

BuildCompactionRequest = Callable[[Sequence[Message], str], ModelRequest]


def provider_summarizer(
    provider: ModelProvider,
    build: BuildCompactionRequest,
    *,
    abort: AbortSignal | None = None,
) -> Summarize:
    """A `Summarize` that sends `build(messages, instruction)` and returns the answer's text.
    Provider errors (PromptTooLongError in particular) propagate to the compaction code,
    which shrinks the request or counts a failure."""

    async def summarize(messages: Sequence[Message], instruction: str) -> str:
        response = await complete(provider, build(messages, instruction), abort)
        return "".join(b.text for b in response.content if isinstance(b, TextBlock))

    return summarize
