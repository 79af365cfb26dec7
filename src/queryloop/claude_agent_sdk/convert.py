"""queryloop's loop events as the SDK's messages: pure functions, no I/O.

What is reported follows Claude Code's stream: the model's responses (`AssistantMessage`),
the tool results that answer them (`UserMessage`), compaction boundaries and background
tasks (`SystemMessage` subtypes), and, when asked for, the raw streaming events
(`StreamEvent`). What Claude Code does not report is left out: the prompt itself,
attachments and other context queryloop adds for the model (meta messages), progress,
and queryloop's own bookkeeping messages.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from ..loop.events import ApiRetry, CompactionEvent, LoopEvent, MessageEvent, StreamDelta
from ..messages import blocks as loop_blocks
from ..messages.types import AssistantMessage as LoopAssistant
from ..messages.types import UserMessage as LoopUser
from ..providers import sse
from ..providers.base import (
    BlockComplete,
    BlockStart,
    InputJsonDelta,
    MessageComplete,
    MessageDelta,
    MessageStart,
    TextDelta,
    ThinkingDelta,
)
from ..providers.base import StreamEvent as ProviderEvent
from ..tasks.events import TaskEvent, TaskEventKind, TaskStatus
from .messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)


def convert_event(
    event: LoopEvent, session_id: str, *, partial: bool, replay: bool = False
) -> list[Message]:
    """The SDK messages one loop event becomes (often none); `replay` reports the prompts
    too (the CLI's `--replay-user-messages`)."""
    if isinstance(event, MessageEvent):
        found = convert_message(event.message, session_id)
        if found is None and replay:
            found = prompt_message(event.message)
        return [found] if found is not None else []
    if isinstance(event, StreamDelta):
        return [*stream_events(event.event, session_id)] if partial else []
    if isinstance(event, CompactionEvent):
        return [compact_boundary(event, session_id)]
    if isinstance(event, ApiRetry):
        return [api_retry(event, session_id)]
    if isinstance(event, TaskEvent):
        found_task = task_message(event, session_id)
        return [found_task] if found_task is not None else []
    return []


def convert_message(message: object, session_id: str) -> Message | None:
    """An assistant response, or the tool results of a user message; None for the rest."""
    if isinstance(message, LoopAssistant):
        return AssistantMessage(
            content=sdk_blocks(message.content),
            model=message.model,
            parent_tool_use_id=message.parent_tool_use_id,
            error="unknown" if message.is_api_error else None,
            usage=message.usage.to_dict() if message.usage is not None else None,
            message_id=message.message_id or None,
            stop_reason=message.stop_reason,
            session_id=session_id,
            uuid=message.uuid,
        )
    if isinstance(message, LoopUser) and not isinstance(message.content, str):
        results = [b for b in message.content if isinstance(b, loop_blocks.ToolResultBlock)]
        if results:
            return UserMessage(
                content=sdk_blocks(results),
                uuid=message.uuid,
                parent_tool_use_id=message.parent_tool_use_id,
            )
    return None


def prompt_message(message: object) -> UserMessage | None:
    """The user's own prompt (not context queryloop added), with its uuid."""
    if not isinstance(message, LoopUser) or message.is_meta:
        return None
    if isinstance(message.content, str):
        return UserMessage(content=message.content, uuid=message.uuid)
    return UserMessage(content=sdk_blocks(message.content), uuid=message.uuid)


def sdk_blocks(blocks: Sequence[object]) -> list[ContentBlock]:
    """The SDK's blocks for queryloop's (redacted thinking, images and documents have no SDK
    block type and are left out)."""
    out: list[ContentBlock] = []
    for block in blocks:
        if isinstance(block, loop_blocks.TextBlock):
            out.append(TextBlock(block.text))
        elif isinstance(block, loop_blocks.ThinkingBlock):
            out.append(ThinkingBlock(block.thinking, block.signature))
        elif isinstance(block, loop_blocks.ToolUseBlock):
            out.append(ToolUseBlock(block.id, block.name, dict(block.input)))
        elif isinstance(block, loop_blocks.ToolResultBlock):
            content: str | list[dict[str, Any]] = (
                block.content
                if isinstance(block.content, str)
                else [loop_blocks.block_to_api(b) for b in block.content]
            )
            out.append(ToolResultBlock(block.tool_use_id, content, block.is_error))
    return out


def compact_boundary(event: CompactionEvent, session_id: str) -> SystemMessage:
    """`system`/`compact_boundary` with Claude Code's `compact_metadata`."""
    data = {
        "type": "system",
        "subtype": "compact_boundary",
        "session_id": session_id,
        "uuid": str(uuid.uuid4()),
        "compact_metadata": {
            "trigger": "auto" if event.trigger.value == "reactive" else event.trigger.value,
            "pre_tokens": event.pre_tokens,
        },
    }
    return SystemMessage("compact_boundary", data)


def api_retry(event: ApiRetry, session_id: str) -> SystemMessage:
    """`system`/`api_retry`: a failed request is sent again after `retry_delay_ms` (the
    fields of Claude Code's stream line, as print mode's stream-json writes them)."""
    status = getattr(event.error, "status", None)
    data = {
        "type": "system",
        "subtype": "api_retry",
        "session_id": session_id,
        "uuid": str(uuid.uuid4()),
        "attempt": event.attempt,
        "max_retries": event.max_retries,
        "retry_delay_ms": round(event.delay_s * 1000),
        "error_status": status if isinstance(status, int) else None,
        "error": str(event.error),
    }
    return SystemMessage("api_retry", data)


_FINAL = {
    TaskStatus.COMPLETED: "completed",
    TaskStatus.FAILED: "failed",
    TaskStatus.KILLED: "stopped",
    TaskStatus.RUNNING: "completed",
}


def task_message(event: TaskEvent, session_id: str) -> SystemMessage | None:
    """A background task's start and end, as the SDK's task messages (progress is not
    reported: queryloop's progress events carry no usage)."""
    base = {"session_id": session_id, "task_id": event.task_id, "uuid": str(uuid.uuid4())}
    tool_use_id = event.tool_use_id or None
    if event.kind is TaskEventKind.STARTED:
        data = {
            "type": "system",
            "subtype": "task_started",
            **base,
            "description": event.description,
            "task_type": event.task_type.value,
            "tool_use_id": tool_use_id,
        }
        return TaskStartedMessage(
            "task_started",
            data,
            task_id=event.task_id,
            description=event.description,
            uuid=base["uuid"],
            session_id=session_id,
            tool_use_id=tool_use_id,
            task_type=event.task_type.value,
        )
    if event.kind is TaskEventKind.FINISHED:
        status = _FINAL[event.status]
        data = {
            "type": "system",
            "subtype": "task_notification",
            **base,
            "status": status,
            "summary": event.detail,
            "tool_use_id": tool_use_id,
        }
        return TaskNotificationMessage(
            "task_notification",
            data,
            task_id=event.task_id,
            status=status,
            summary=event.detail,
            uuid=base["uuid"],
            session_id=session_id,
            tool_use_id=tool_use_id,
        )
    return None


def stream_events(event: ProviderEvent, session_id: str) -> list[StreamEvent]:
    """A canonical provider event as the Anthropic streaming event(s) it came from."""
    return [
        StreamEvent(uuid=str(uuid.uuid4()), session_id=session_id, event=raw)
        for raw in raw_events(event)
    ]


def raw_events(event: ProviderEvent) -> list[dict[str, Any]]:
    """The Messages API's SSE payloads for one canonical event."""
    match event:
        case MessageStart(message_id=mid, model=model, usage=usage):
            return [sse.message_start(mid, model, usage.to_dict())]
        case BlockStart(index=index, block_type=kind, tool_use_id=tid, tool_name=name):
            return [
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": _empty_block(kind, tid, name),
                }
            ]
        case TextDelta(index=index, text=text):
            return [_delta(index, {"type": "text_delta", "text": text})]
        case ThinkingDelta(index=index, thinking=thinking):
            return [_delta(index, {"type": "thinking_delta", "thinking": thinking})]
        case InputJsonDelta(index=index, partial_json=partial):
            return [_delta(index, {"type": "input_json_delta", "partial_json": partial})]
        case BlockComplete(index=index, block=block):
            stop = {"type": "content_block_stop", "index": index}
            if isinstance(block, loop_blocks.ThinkingBlock) and block.signature:
                signature = {"type": "signature_delta", "signature": block.signature}
                return [_delta(index, signature), stop]
            return [stop]
        case MessageDelta(stop_reason=reason, usage=usage, stop_sequence=sequence):
            return [
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": reason, "stop_sequence": sequence},
                    "usage": {"output_tokens": usage.output_tokens},
                }
            ]
        case MessageComplete():
            return [{"type": "message_stop"}]
    return []


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _empty_block(kind: str, tool_use_id: str | None, name: str | None) -> dict[str, Any]:
    if kind == "tool_use":
        return {"type": "tool_use", "id": tool_use_id, "name": name, "input": {}}
    if kind == "thinking":
        return {"type": "thinking", "thinking": "", "signature": ""}
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": ""}
    return {"type": kind, "text": ""}
