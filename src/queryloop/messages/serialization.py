"""Lossless JSON round-trip of internal messages (transcripts depend on it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .blocks import (
    AssistantContentBlock,
    ContentBlock,
    ToolResultBlock,
    UserContentBlock,
    block_from_api,
    block_to_api,
)
from .interruption import Interruption, legacy_interruption
from .types import (
    AssistantMessage,
    Attachment,
    AttachmentMessage,
    Message,
    ProgressMessage,
    SystemMessage,
    SystemSubtype,
    TombstoneMessage,
    ToolUseSummaryMessage,
    UserMessage,
)
from .usage import Usage


class MessageDecodeError(ValueError):
    """A stored message could not be decoded; the record names what was wrong."""


def _common(message: Message) -> dict[str, Any]:
    data: dict[str, Any] = {
        "type": message.type,
        "uuid": message.uuid,
        "timestamp": message.timestamp,
    }
    if message.is_meta:
        data["is_meta"] = True
    if message.parent_tool_use_id is not None:
        data["parent_tool_use_id"] = message.parent_tool_use_id
    return data


def _blocks(content: str | tuple[ContentBlock, ...]) -> str | list[dict[str, Any]]:
    return content if isinstance(content, str) else [_block_to_dict(b) for b in content]


def _block_to_dict(block: ContentBlock) -> dict[str, Any]:
    """The wire form plus the internal fields a transcript keeps (a result's `interrupted`)."""
    data = block_to_api(block)
    if isinstance(block, ToolResultBlock) and block.interrupted is not None:
        data["interrupted"] = block.interrupted.value
    return data


def _block_from_dict(data: Mapping[str, Any]) -> ContentBlock:
    block = block_from_api(data)
    if not isinstance(block, ToolResultBlock):
        return block
    stored = data.get("interrupted")
    why = (
        Interruption(stored)
        if stored is not None
        # Written before the flag existed: the text is all there is (`legacy_interruption`).
        else legacy_interruption(block.content, is_error=block.is_error)
    )
    return block if why is None else replace(block, interrupted=why)


def message_to_dict(message: Message) -> dict[str, Any]:
    """The JSON-serializable form of any internal message."""
    data = _common(message)
    match message:
        case UserMessage():
            data["content"] = _blocks(message.content)
            if message.is_virtual:
                data["is_virtual"] = True
            if message.is_compact_summary:
                data["is_compact_summary"] = True
        case AssistantMessage():
            data["content"] = _blocks(message.content)
            data["message_id"] = message.message_id
            data["model"] = message.model
            data["stop_reason"] = message.stop_reason
            if message.usage is not None:
                data["usage"] = message.usage.to_dict()
            if message.is_api_error:
                data["is_api_error"] = True
            if message.is_virtual:
                data["is_virtual"] = True
        case SystemMessage():
            data.update(
                subtype=message.subtype.value,
                content=message.content,
                level=message.level,
                metadata=dict(message.metadata),
            )
        case AttachmentMessage():
            data["attachment"] = {"type": message.attachment.type, **message.attachment.data}
        case ProgressMessage():
            data.update(tool_use_id=message.tool_use_id, data=dict(message.data))
        case TombstoneMessage():
            data.update(target_uuid=message.target_uuid, reason=message.reason)
        case ToolUseSummaryMessage():
            data.update(summary=message.summary, tool_use_ids=list(message.tool_use_ids))
    return data


def _common_kwargs(data: Mapping[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"uuid": data["uuid"], "timestamp": data["timestamp"]}
    kwargs["is_meta"] = bool(data.get("is_meta", False))
    kwargs["parent_tool_use_id"] = data.get("parent_tool_use_id")
    return kwargs


def _user_content(raw: Any) -> str | tuple[UserContentBlock, ...]:
    if isinstance(raw, str):
        return raw
    blocks = tuple(_block_from_dict(b) for b in raw)
    return blocks  # type: ignore[return-value]


def _assistant_content(raw: Any) -> tuple[AssistantContentBlock, ...]:
    if isinstance(raw, str):
        raw = [{"type": "text", "text": raw}]
    return tuple(_block_from_dict(b) for b in raw)  # type: ignore[misc]


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """Rebuild a message from `message_to_dict` output. Raises MessageDecodeError."""
    try:
        return _decode(data)
    except MessageDecodeError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise MessageDecodeError(f"cannot decode {data.get('type')!r} message: {exc}") from exc


def _decode(data: Mapping[str, Any]) -> Message:
    kind = data.get("type")
    common = _common_kwargs(data)
    if kind == "user":
        return UserMessage(
            content=_user_content(data["content"]),
            is_virtual=bool(data.get("is_virtual", False)),
            is_compact_summary=bool(data.get("is_compact_summary", False)),
            **common,
        )
    if kind == "assistant":
        usage = data.get("usage")
        return AssistantMessage(
            content=_assistant_content(data["content"]),
            message_id=data.get("message_id", ""),
            model=data.get("model", ""),
            stop_reason=data.get("stop_reason"),
            usage=Usage.from_dict(usage) if usage is not None else None,
            is_api_error=bool(data.get("is_api_error", False)),
            is_virtual=bool(data.get("is_virtual", False)),
            **common,
        )
    if kind == "system":
        return SystemMessage(
            subtype=SystemSubtype(data["subtype"]),
            content=data.get("content", ""),
            level=data.get("level", "info"),
            metadata=dict(data.get("metadata") or {}),
            **common,
        )
    if kind == "attachment":
        payload = dict(data["attachment"])
        att_type = payload.pop("type")
        return AttachmentMessage(attachment=Attachment(type=att_type, data=payload), **common)
    if kind == "progress":
        return ProgressMessage(
            tool_use_id=data["tool_use_id"], data=dict(data.get("data") or {}), **common
        )
    if kind == "tombstone":
        return TombstoneMessage(
            target_uuid=data["target_uuid"], reason=data.get("reason", ""), **common
        )
    if kind == "tool_use_summary":
        return ToolUseSummaryMessage(
            summary=data["summary"], tool_use_ids=tuple(data.get("tool_use_ids") or ()), **common
        )
    raise MessageDecodeError(f"unknown message type {kind!r}")
