"""Phase two, conversational: queued commands, finished background tasks, a todo-list
reminder. (A date change is a fact delta: `context.facts`.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...messages.blocks import ToolUseBlock
from ...messages.types import AssistantMessage, Attachment, AttachmentMessage, Message
from ..kinds import AttachmentType

if TYPE_CHECKING:
    from ..attachments import AttachmentContext

TODO_TOOL_NAME = "TodoWrite"


async def queued_commands(ctx: AttachmentContext) -> list[Attachment]:
    """A `queued_command` attachment per prompt the user queued while the model worked."""
    return [
        Attachment(AttachmentType.QUEUED_COMMAND, {"prompt": p})
        for p in ctx.queued_commands
        if p.strip()
    ]


async def task_notifications(ctx: AttachmentContext) -> list[Attachment]:
    """A `task_notification` attachment per background task of this thread that finished."""
    return [Attachment(AttachmentType.TASK_NOTIFICATION, dict(n)) for n in ctx.task_notifications]


async def todo_reminder(ctx: AttachmentContext, messages: Sequence[Message]) -> list[Attachment]:
    """A `todo_reminder` when neither TodoWrite nor a reminder occurred for N assistant turns.

    N is `ctx.todo_reminder_turns`. Only when the TodoWrite tool is available. The scan goes
    backwards and stops after N turns, so its cost does not grow with the history.
    """
    n = ctx.todo_reminder_turns
    if TODO_TOOL_NAME not in ctx.tools or n <= 0:
        return []
    turns = _turns_since_todo_activity(messages, n)
    if turns < n:
        return []
    todos = list(ctx.tool_context.todos) if ctx.tool_context is not None else []
    return [Attachment(AttachmentType.TODO_REMINDER, {"todos": todos, "turns_since_update": turns})]


def _turns_since_todo_activity(messages: Sequence[Message], limit: int) -> int:
    """Assistant turns (distinct response ids) after the last TodoWrite call or reminder."""
    turn_ids: set[str] = set()
    for m in reversed(messages):
        if isinstance(m, AttachmentMessage) and m.attachment.type == AttachmentType.TODO_REMINDER:
            break
        if isinstance(m, AssistantMessage):
            if any(isinstance(b, ToolUseBlock) and b.name == TODO_TOOL_NAME for b in m.content):
                break
            turn_ids.add(m.message_id or m.uuid)
            if len(turn_ids) >= limit:
                break
    return len(turn_ids)
