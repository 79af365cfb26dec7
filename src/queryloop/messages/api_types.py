"""Wire shapes of a Messages API request, as TypedDicts (the edge of the system)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

ApiContentBlock: TypeAlias = dict[str, Any]


class ApiMessage(TypedDict):
    """One message of the API's strict user/assistant alternation."""

    role: Literal["user", "assistant"]
    content: list[ApiContentBlock]


class ApiSystemBlock(TypedDict):
    """A text block of the `system` parameter."""

    type: Literal["text"]
    text: str
    cache_control: NotRequired[dict[str, Any]]


class ApiTool(TypedDict):
    """A client tool definition."""

    name: str
    description: str
    input_schema: dict[str, Any]
    cache_control: NotRequired[dict[str, Any]]


class ApiServerTool(TypedDict):
    """A server tool definition (the API runs the tool): `web_search_20250305` and the like."""

    type: str
    name: str
    max_uses: NotRequired[int]
    allowed_domains: NotRequired[list[str]]
    blocked_domains: NotRequired[list[str]]
    user_location: NotRequired[dict[str, Any]]


ApiRequest: TypeAlias = dict[str, Any]
"""A whole request body (model, max_tokens, system, messages, tools, thinking, ...)."""
