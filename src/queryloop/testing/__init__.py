"""queryloop.testing: a real local Messages API server with a scripted model, for tests.

    from queryloop.testing import MessagesServer, turn, text, tool_use

    script = [turn(tool_use("Read", {"file_path": "a.py"})), turn(text("Done."))]
    with MessagesServer(script) as server:
        provider = AnthropicProvider(api_key="test", base_url=server.base_url)
        ...

`ScriptedProvider` answers from the same turns in process, without HTTP. See docs/testing.md.
"""

from .script import (
    OUTPUT_TOOL,
    Fault,
    RedactedThinkingPart,
    ScriptedModel,
    ScriptExhaustedError,
    TextPart,
    ThinkingPart,
    ToolUsePart,
    Turn,
    cut_stream,
    http_error,
    overloaded,
    overloaded_mid_stream,
    rate_limited,
    redacted_thinking,
    request_too_large,
    server_error,
    structured_output,
    text,
    thinking,
    tool_use,
    turn,
)
from .scripted import ScriptedProvider
from .server import MessagesServer, RecordedRequest
from .server_tools import (
    CitedTextPart,
    ServerToolUsePart,
    WebSearchResultPart,
    cited_text,
    hit,
    web_search,
)
from .tokens import count_input_tokens, estimate_tokens, without_cache_control

__all__ = [
    "OUTPUT_TOOL",
    "CitedTextPart",
    "Fault",
    "MessagesServer",
    "RecordedRequest",
    "RedactedThinkingPart",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedProvider",
    "ServerToolUsePart",
    "TextPart",
    "ThinkingPart",
    "ToolUsePart",
    "Turn",
    "WebSearchResultPart",
    "cited_text",
    "count_input_tokens",
    "cut_stream",
    "estimate_tokens",
    "hit",
    "http_error",
    "overloaded",
    "overloaded_mid_stream",
    "rate_limited",
    "redacted_thinking",
    "request_too_large",
    "server_error",
    "structured_output",
    "text",
    "thinking",
    "tool_use",
    "turn",
    "web_search",
    "without_cache_control",
]
