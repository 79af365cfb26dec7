"""The messages and content blocks `query()` and `ClaudeSDKClient` yield (the SDK's names,
fields and defaults).

They are plain (not frozen) dataclasses, as the SDK's are: code written for it may build
or change them, and `dataclasses.replace`/`asdict` work the same. They are made from
queryloop's own messages by `convert`; nothing here knows the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias


@dataclass
class TextBlock:
    """Text the model wrote (or, in a `UserMessage`, text of a prompt)."""

    text: str


@dataclass
class ThinkingBlock:
    """The model's extended thinking, with the signature the API needs to accept it back."""

    thinking: str
    signature: str


@dataclass
class ToolUseBlock:
    """A tool call. MCP tools (in-process ones too) are named `mcp__<server>__<tool>`."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ToolResultBlock:
    """A tool's result, in the `UserMessage` that answers the call: a string, or the API's
    content blocks as dicts (images, documents)."""

    tool_use_id: str
    content: str | list[dict[str, Any]] | None = None
    is_error: bool | None = None


ContentBlock: TypeAlias = TextBlock | ThinkingBlock | ToolUseBlock | ToolResultBlock
"""The block types queryloop produces (the SDK's server-tool blocks never occur: queryloop
sends no server tools)."""

AssistantMessageError = Literal[
    "authentication_failed",
    "billing_error",
    "rate_limit",
    "invalid_request",
    "server_error",
    "unknown",
]


@dataclass
class UserMessage:
    """A user turn the stream reports: tool results (`ToolResultBlock`s) answering the
    assistant's calls. Prompts you send are not echoed back, as in the SDK."""

    content: str | list[ContentBlock]
    uuid: str | None = None
    parent_tool_use_id: str | None = None
    tool_use_result: dict[str, Any] | None = None
    origin: dict[str, Any] | None = None


@dataclass
class AssistantMessage:
    """One model response (or part of one: several share a `message_id`)."""

    content: list[ContentBlock]
    model: str
    parent_tool_use_id: str | None = None
    error: AssistantMessageError | None = None
    usage: dict[str, Any] | None = None
    message_id: str | None = None
    stop_reason: str | None = None
    session_id: str | None = None
    uuid: str | None = None


@dataclass
class SystemMessage:
    """A system event: `subtype` "init" at the start of each response (`data` holds the
    session id, model, cwd, tools, MCP servers, permission mode, ...), "compact_boundary"
    when the history was summarised, "api_retry" before a failed request is sent again.
    `data` is the whole record."""

    subtype: str
    data: dict[str, Any]


@dataclass
class DeferredToolUse:
    """The tool call a PreToolUse hook deferred (`permissionDecision: "defer"`), as the
    SDK's `ResultMessage.deferred_tool_use` reports it: resume the session to decide it."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass
class ResultMessage:
    """The last message of each response: how it ended and what it cost.

    `subtype` is "success", "error_max_turns", "error_max_budget_usd",
    "error_max_structured_output_retries" or "error_during_execution" (a model error
    keeps "success" with `is_error` true, as the SDK reports an API failure).
    `total_cost_usd` and `usage` are totals since the connection (or `query()` call)
    began; `num_turns`, `duration_ms` and `duration_api_ms` are this response's.
    `terminal_reason` is the loop's own reason (docs/loop.md). A run that stopped at a
    deferred tool call is a success with `stop_reason` "tool_deferred" and the call in
    `deferred_tool_use` (the first, when several wait).
    """

    subtype: str
    duration_ms: int
    duration_api_ms: int
    is_error: bool
    num_turns: int
    session_id: str
    stop_reason: str | None = None
    total_cost_usd: float | None = None
    usage: dict[str, Any] | None = None
    result: str | None = None
    structured_output: Any = None
    """The value matching `output_format`'s schema, on success (None without one)."""
    model_usage: dict[str, Any] | None = None
    permission_denials: list[Any] | None = None
    deferred_tool_use: DeferredToolUse | None = None
    errors: list[str] | None = None
    api_error_status: int | None = None
    uuid: str | None = None
    terminal_reason: str | None = None
    origin: dict[str, Any] | None = None


@dataclass
class StreamEvent:
    """A raw Anthropic streaming event (`message_start`, `content_block_delta`, ...), sent
    when `include_partial_messages` is on."""

    uuid: str
    session_id: str
    event: dict[str, Any]
    parent_tool_use_id: str | None = None


@dataclass
class TaskStartedMessage(SystemMessage):
    """A background task (a shell or an agent) started (subtype "task_started")."""

    task_id: str = ""
    description: str = ""
    uuid: str = ""
    session_id: str = ""
    tool_use_id: str | None = None
    task_type: str | None = None


@dataclass
class TaskNotificationMessage(SystemMessage):
    """A background task ended (subtype "task_notification"): `status` is "completed",
    "failed" or "stopped"."""

    task_id: str = ""
    status: str = ""
    output_file: str = ""
    summary: str = ""
    uuid: str = ""
    session_id: str = ""
    tool_use_id: str | None = None
    usage: dict[str, Any] | None = field(default=None)


Message: TypeAlias = UserMessage | AssistantMessage | SystemMessage | ResultMessage | StreamEvent
