"""Normalization passes on internal `Message` objects (see normalize.PASSES for the order)."""

from __future__ import annotations

from typing import Any

from .attachments import RenderContext, render_attachment
from .blocks import block_to_api
from .normalize_context import Draft, NormalizeContext
from .types import (
    AssistantMessage,
    AttachmentMessage,
    Message,
    SystemMessage,
    SystemSubtype,
    TombstoneMessage,
    UserMessage,
)


def drop_before_compact_boundary(messages: list[Any], ctx: NormalizeContext) -> list[Any]:
    """Drop everything before the last compact boundary.

    Needs: the raw internal array. A compaction summarized what came before its boundary
    and copied the latest rounds after it (fresh uuids, the same tool ids), so those
    messages must not reach the API again: sent together, the copies would repeat their
    content and lose their tool calls to the first occurrence of each id. The query loop
    and the session loader already start the array at the boundary; this makes the rule
    hold for any caller. One backwards scan, stopping at the boundary.
    Guarantees: no compact boundary but (possibly) the first message; the same list when
    there is none.
    """
    for index in range(len(messages) - 1, 0, -1):
        message = messages[index]
        if isinstance(message, SystemMessage) and message.subtype is SystemSubtype.COMPACT_BOUNDARY:
            return messages[index:]
    return messages


def dedupe_by_uuid(messages: list[Any], ctx: NormalizeContext) -> list[Any]:
    """Keep only the first message of each uuid.

    Needs: the raw internal array. A message present twice (a transcript loaded or
    replayed twice, a resumed turn appended again) would otherwise reach the API twice;
    a uuid names one message, so every later copy goes, whatever kind it is.
    Guarantees: uuids unique, order otherwise unchanged (the same list when nothing repeats).
    """
    seen: set[str] = set()
    out: list[Any] = []
    for message in messages:
        if message.uuid not in seen:
            seen.add(message.uuid)
            out.append(message)
    return messages if len(out) == len(messages) else out


def reorder_attachments(messages: list[Any], ctx: NormalizeContext) -> list[Any]:
    """Bubble attachments up to just after the nearest stop point above them.

    Needs: the raw internal array. Stop points are assistant messages and user messages
    whose content starts with a tool_result, and (unless this is a `continuation`) a user
    message that opens the array: the conversation must open with a user message, so
    attachments of the first turn go after it (after the session context that opens every
    request) instead of in front of it. Attachments with no stop point above go to the top.
    Guarantees: same messages, attachments moved, relative order otherwise unchanged. O(N):
    one backwards scan pushing onto a list, then a single reverse.
    """
    first_user = None if ctx.continuation else _first_user(messages)
    result: list[Any] = []
    pending: list[Any] = []
    for message in reversed(messages):
        if isinstance(message, AttachmentMessage):
            pending.append(message)
            continue
        if pending and (message is first_user or _is_stop_point(message)):
            result.extend(pending)
            pending.clear()
        result.append(message)
    result.extend(pending)
    result.reverse()
    return result


def _first_user(messages: list[Any]) -> UserMessage | None:
    """The message that opens the conversation, when it is a user message (attachments
    before it do not count)."""
    for message in messages:
        if not isinstance(message, AttachmentMessage):
            return message if isinstance(message, UserMessage) else None
    return None


def _is_stop_point(message: Message) -> bool:
    if isinstance(message, AssistantMessage):
        return True
    if isinstance(message, UserMessage) and not isinstance(message.content, str):
        return bool(message.content) and message.content[0].type == "tool_result"
    return False


def drop_non_api_messages(messages: list[Any], ctx: NormalizeContext) -> list[Any]:
    """Remove everything that never reaches the API.

    Needs: attachments already placed (tombstones may target any message, so this runs
    after reordering, which never drops anything). Removes progress, tombstones and every
    message a tombstone targets, tool_use_summary, virtual and API-error messages, and
    system messages except `local_command`, which becomes a meta user message with
    `<local-command-stdout>` text.
    Guarantees: only user, assistant and attachment messages remain.
    """
    voided = {m.target_uuid for m in messages if isinstance(m, TombstoneMessage)}
    kept: list[Any] = []
    for message in messages:
        if message.uuid in voided:
            continue
        if isinstance(message, UserMessage):
            if not message.is_virtual:
                kept.append(message)
        elif isinstance(message, AssistantMessage):
            if not (message.is_virtual or message.is_api_error):
                kept.append(message)
        elif isinstance(message, AttachmentMessage):
            kept.append(message)
        elif isinstance(message, SystemMessage) and message.subtype is SystemSubtype.LOCAL_COMMAND:
            kept.append(_local_command_as_user(message))
    return kept


def _local_command_as_user(message: SystemMessage) -> UserMessage:
    text = f"<local-command-stdout>{message.content}</local-command-stdout>"
    return UserMessage(content=text, is_meta=True, uuid=message.uuid, timestamp=message.timestamp)


def render_attachments(messages: list[Any], ctx: NormalizeContext) -> list[Draft]:
    """Turn every message into a `Draft` of wire blocks; render attachments via the registry.

    Needs: only user, assistant and attachment messages. Reminder text becomes a user
    draft; a synthetic tool call becomes an assistant draft (tool_use) and a user draft
    (tool_result), so alternation holds once consecutive roles merge.
    Guarantees: drafts only, wire blocks from `block_to_api`, string user content as one
    text block, assistant drafts carry their API message id.
    """
    render_ctx = RenderContext(tool_names=ctx.tool_names, thinking_enabled=ctx.thinking_enabled)
    drafts: list[Draft] = []
    append = drafts.append
    for message in messages:
        if isinstance(message, AssistantMessage):
            append(("assistant", [block_to_api(b) for b in message.content], message.message_id))
        elif isinstance(message, UserMessage):
            content = message.content
            if isinstance(content, str):
                append(("user", [{"type": "text", "text": content}], ""))
            else:
                append(("user", [block_to_api(b) for b in content], ""))
        else:
            rendered = render_attachment(message, render_ctx)
            if rendered is None:
                continue
            if rendered.text is not None:
                append(("user", [{"type": "text", "text": rendered.text}], ""))
            if rendered.tool_use is not None and rendered.tool_result is not None:
                append(("assistant", [block_to_api(rendered.tool_use)], ""))
                append(("user", [block_to_api(rendered.tool_result)], ""))
    return drafts
