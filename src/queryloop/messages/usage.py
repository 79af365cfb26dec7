"""Token usage as the Messages API reports it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

STREAMED_CHARS_PER_TOKEN = 4
"""Characters a streamed output token is taken to hold, where the API has not counted yet."""


def estimate_streamed_tokens(chars: int) -> int:
    """Output tokens for `chars` characters of streamed text, thinking or tool input: the
    estimate the terminal's spinner shows (`↓ 366 tokens`), and the one an interrupted
    response is billed at when no `message_delta` counted its output."""
    return chars // STREAMED_CHARS_PER_TOKEN


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one response. `input_tokens` excludes cached reads and cache writes."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_1h_input_tokens: int = 0
    web_search_requests: int = 0
    """Searches the server's web search tool ran (`server_tool_use.web_search_requests`),
    billed per search beside the tokens."""

    @property
    def total_input_tokens(self) -> int:
        """Every token the request's prompt contained, cached or not."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def context_tokens(self) -> int:
        """Prompt plus output: what the conversation occupies after this response."""
        return self.total_input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cache_creation_1h_input_tokens=self.cache_creation_1h_input_tokens
            + other.cache_creation_1h_input_tokens,
            web_search_requests=self.web_search_requests + other.web_search_requests,
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in transcripts and results (`server_tool_use` as the API
        writes it, only when a search ran)."""
        data: dict[str, Any] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_1h_input_tokens": self.cache_creation_1h_input_tokens,
        }
        if self.web_search_requests:
            data["server_tool_use"] = {"web_search_requests": self.web_search_requests}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Usage:
        """Parse API or transcript usage; missing or null fields count as zero."""
        if not data:
            return cls()
        creation = data.get("cache_creation")
        one_hour = 0
        if isinstance(creation, Mapping):
            one_hour = int(creation.get("ephemeral_1h_input_tokens") or 0)
        server = data.get("server_tool_use")
        searches = int(server.get("web_search_requests") or 0) if isinstance(server, Mapping) else 0
        return cls(
            input_tokens=int(data.get("input_tokens") or 0),
            output_tokens=int(data.get("output_tokens") or 0),
            cache_creation_input_tokens=int(data.get("cache_creation_input_tokens") or 0),
            cache_read_input_tokens=int(data.get("cache_read_input_tokens") or 0),
            cache_creation_1h_input_tokens=int(
                data.get("cache_creation_1h_input_tokens") or one_hour
            ),
            web_search_requests=searches,
        )
