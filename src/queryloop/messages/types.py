"""The internal message array's types.

The array is heterogeneous: besides `user` and `assistant` it holds system events,
attachments (typed context to inject), progress for UIs, tombstones that void earlier
messages, and tool-use summaries. Only `normalize_messages_for_api` turns it into the strict
user/assistant alternation the API accepts.
"""

from __future__ import annotations

import uuid as _uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal, TypeAlias

from .blocks import AssistantContentBlock, UserContentBlock
from .usage import Usage


def new_uuid() -> str:
    """A fresh message uuid."""
    return str(_uuid.uuid4())


def now_iso() -> str:
    """The current UTC time as an ISO-8601 string (transcript timestamps)."""
    return datetime.now(UTC).isoformat()


class SystemSubtype(StrEnum):
    """Kinds of system message. Only `local_command` reaches the API (as user text)."""

    LOCAL_COMMAND = "local_command"
    COMPACT_BOUNDARY = "compact_boundary"
    MICROCOMPACT_BOUNDARY = "microcompact_boundary"
    API_ERROR = "api_error"
    PERMISSION_RETRY = "permission_retry"
    PERMISSION_DENIED = "permission_denied"
    INFORMATIONAL = "informational"
    STOP_HOOK_SUMMARY = "stop_hook_summary"
    MODEL_FALLBACK = "model_fallback"
    INTERRUPTION = "interruption"
    TURN_DURATION = "turn_duration"
    DEFERRED_TOOL_USE = "deferred_tool_use"
    """A tool call put off for a later decision, and what became of it (`messages.deferral`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Base:
    uuid: str = field(default_factory=new_uuid)
    timestamp: str = field(default_factory=now_iso)
    is_meta: bool = False
    parent_tool_use_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage(_Base):
    """User input, tool results, or synthetic (meta) text the model must see."""

    content: str | tuple[UserContentBlock, ...]
    is_virtual: bool = False
    is_compact_summary: bool = False
    type: Literal["user"] = "user"


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage(_Base):
    """Model output. One API response may be split over several of these sharing `message_id`."""

    content: tuple[AssistantContentBlock, ...]
    message_id: str = ""
    model: str = ""
    stop_reason: str | None = None
    usage: Usage | None = None
    is_api_error: bool = False
    is_virtual: bool = False
    type: Literal["assistant"] = "assistant"


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemMessage(_Base):
    """A local event: command output, compact boundary, API error, fallback notice, ..."""

    subtype: SystemSubtype
    content: str = ""
    level: Literal["info", "warning", "error"] = "info"
    metadata: Mapping[str, Any] = field(default_factory=dict)
    type: Literal["system"] = "system"


@dataclass(frozen=True, slots=True)
class Attachment:
    """A typed payload of context. `type` selects the renderer; `data` is JSON-serializable."""

    type: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachmentMessage(_Base):
    """Context to inject (memory, changed files, deltas, reminders...)."""

    attachment: Attachment
    type: Literal["attachment"] = "attachment"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressMessage(_Base):
    """Tool progress for UIs; never sent to the model."""

    tool_use_id: str
    data: Mapping[str, Any] = field(default_factory=dict)
    type: Literal["progress"] = "progress"


class TombstoneReason(StrEnum):
    """Why a message was voided. Whoever voids one writes its reason from here, and whoever
    reads the array (the report, the traces) recognises it by this value, never by words
    typed again. `TombstoneMessage.reason` stays a `str`: transcripts keep it as text."""

    MODEL_FALLBACK = "model fallback"
    """A response cut short by an overload, before the request went to the fallback model."""
    STREAM_RETRY = "stream interrupted"
    """A response whose stream broke before any tool call; the request is sent again."""
    OUTPUT_ESCALATE = "max_output_tokens_escalate"
    """A reply cut off at the output limit, asked again with the model's maximum."""
    CALL_REDONE = "interrupted call redone"
    """The stand-in result of a call interrupted by a kill, answered again on resume."""
    REWIND = "rewind"
    """A message after the prompt the conversation was rewound to."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TombstoneMessage(_Base):
    """Voids an earlier message (for example a failed attempt before a model fallback)."""

    target_uuid: str
    reason: str = ""
    """A `TombstoneReason` value (free text in transcripts written by others)."""
    type: Literal["tombstone"] = "tombstone"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolUseSummaryMessage(_Base):
    """A short label for a batch of tool calls, for compact UIs."""

    summary: str
    tool_use_ids: tuple[str, ...] = ()
    type: Literal["tool_use_summary"] = "tool_use_summary"


Message: TypeAlias = (
    UserMessage
    | AssistantMessage
    | SystemMessage
    | AttachmentMessage
    | ProgressMessage
    | TombstoneMessage
    | ToolUseSummaryMessage
)
