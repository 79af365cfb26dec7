"""Small constructors so callers never assemble message dataclasses by hand."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .blocks import (
    AssistantContentBlock,
    DocumentBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserContentBlock,
)
from .interruption import Interruption
from .types import (
    AssistantMessage,
    Attachment,
    AttachmentMessage,
    Message,
    SystemMessage,
    SystemSubtype,
    TombstoneMessage,
    UserMessage,
)


def user_message(
    content: str | Iterable[UserContentBlock],
    *,
    is_meta: bool = False,
    is_compact_summary: bool = False,
    parent_tool_use_id: str | None = None,
) -> UserMessage:
    """A user message from text or blocks."""
    body = content if isinstance(content, str) else tuple(content)
    return UserMessage(
        content=body,
        is_meta=is_meta,
        is_compact_summary=is_compact_summary,
        parent_tool_use_id=parent_tool_use_id,
    )


def meta_user_message(text: str) -> UserMessage:
    """A system-generated user message the model sees but transcripts shown to people hide."""
    return user_message(text, is_meta=True)


def tool_result_message(
    tool_use_id: str,
    content: str | Iterable[TextBlock | ImageBlock | DocumentBlock],
    *,
    is_error: bool = False,
    interrupted: Interruption | None = None,
) -> UserMessage:
    """A user message holding exactly one tool_result (`interrupted`: see
    `ToolResultBlock.interrupted`)."""
    body = content if isinstance(content, str) else tuple(content)
    block = ToolResultBlock(
        tool_use_id=tool_use_id, content=body, is_error=is_error, interrupted=interrupted
    )
    return UserMessage(content=(block,))


def interrupted_result(tool_use_id: str, why: Interruption, tool_name: str = "") -> ToolResultBlock:
    """The stand-in answer for a call interrupted before its tool answered: an is_error
    result with `why`'s text, flagged `interrupted` (every such answer is built here)."""
    return ToolResultBlock(
        tool_use_id=tool_use_id, content=why.text(tool_name), is_error=True, interrupted=why
    )


def interrupted_result_message(
    tool_use_id: str, why: Interruption, tool_name: str = ""
) -> UserMessage:
    """A user message holding exactly one `interrupted_result`."""
    return UserMessage(content=(interrupted_result(tool_use_id, why, tool_name),))


def answer_unanswered(
    tool_uses: Iterable[ToolUseBlock], answered: Iterable[str], why: Interruption
) -> list[UserMessage]:
    """One stand-in result message (`interrupted_result`) for each of `tool_uses` whose id is
    not in `answered`, in order and once per id, so the array stays valid after an interrupt."""
    seen = set(answered)
    out: list[UserMessage] = []
    for use in tool_uses:
        if use.id not in seen:
            seen.add(use.id)
            out.append(interrupted_result_message(use.id, why, use.name))
    return out


def result_ids(messages: Iterable[Message]) -> set[str]:
    """The tool_use ids the tool_results in `messages` answer."""
    return {
        block.tool_use_id
        for message in messages
        if isinstance(message, UserMessage) and not isinstance(message.content, str)
        for block in message.content
        if isinstance(block, ToolResultBlock)
    }


def tool_result_for(tool_use_id: str, messages: Iterable[Message]) -> ToolResultBlock | None:
    """The first tool_result in `messages` that answers `tool_use_id`, if any."""
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            for block in message.content:
                if isinstance(block, ToolResultBlock) and block.tool_use_id == tool_use_id:
                    return block
    return None


def assistant_message(
    content: str | Iterable[AssistantContentBlock],
    *,
    message_id: str = "",
    model: str = "",
    stop_reason: str | None = "end_turn",
) -> AssistantMessage:
    """An assistant message from text or blocks."""
    blocks = (TextBlock(text=content),) if isinstance(content, str) else tuple(content)
    return AssistantMessage(
        content=blocks, message_id=message_id, model=model, stop_reason=stop_reason
    )


def system_message(
    subtype: SystemSubtype,
    content: str = "",
    *,
    level: str = "info",
    metadata: Mapping[str, Any] | None = None,
) -> SystemMessage:
    """A local system event."""
    lvl = level if level in ("info", "warning", "error") else "info"
    return SystemMessage(
        subtype=subtype,
        content=content,
        level=lvl,  # type: ignore[arg-type]
        metadata=dict(metadata or {}),
    )


def compact_boundary(trigger: str, pre_tokens: int, **extra: Any) -> SystemMessage:
    """The marker a compaction leaves: everything before it is summarised after it."""
    return system_message(
        SystemSubtype.COMPACT_BOUNDARY,
        "Conversation compacted",
        metadata={"trigger": trigger, "pre_tokens": pre_tokens, **extra},
    )


def permission_denied_message(
    *,
    tool_name: str,
    tool_use_id: str,
    tool_input: Mapping[str, Any],
    message: str,
    source: str,
    rule: str | None = None,
) -> SystemMessage:
    """The record of a refused tool call, beside its is_error tool_result: who refused it
    (`source`, a `tools.base.DenialSource` value) and by which rule. Never sent to the API;
    `RunResult.denials` and print mode's `permission_denials` are read from these."""
    return system_message(
        SystemSubtype.PERMISSION_DENIED,
        message,
        level="warning",
        metadata={
            "tool_name": tool_name,
            "tool_use_id": tool_use_id,
            "tool_input": dict(tool_input),
            "source": source,
            "rule": rule,
        },
    )


def attachment_message(type: str, **data: Any) -> AttachmentMessage:
    """An attachment message of the given type."""
    return AttachmentMessage(attachment=Attachment(type=type, data=data))


def tombstone(target_uuid: str, reason: str = "") -> TombstoneMessage:
    """A tombstone voiding `target_uuid`; `reason` is a `TombstoneReason` for our own voids."""
    return TombstoneMessage(target_uuid=target_uuid, reason=reason)


def text_of(message: UserMessage | AssistantMessage) -> str:
    """All text blocks of a message joined; tool blocks and thinking are ignored."""
    if isinstance(message.content, str):
        return message.content
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def tool_uses_of(message: AssistantMessage) -> list[ToolUseBlock]:
    """The tool_use blocks of an assistant message, in order."""
    return [b for b in message.content if isinstance(b, ToolUseBlock)]


def final_text(messages: Sequence[Message]) -> str:
    """The answer to the last prompt: the text of its last assistant message that has any
    (a closing tool call without words does not hide the words before it). Looks no further
    back than the prompt itself (a non-meta user message that is not tool results)."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            text = text_of(message)
            if text.strip():
                return text
        elif isinstance(message, UserMessage) and not message.is_meta:
            if isinstance(message.content, str) or any(
                block.type != "tool_result" for block in message.content
            ):
                break
    return ""
