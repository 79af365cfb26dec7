"""How this package's attachment types read to the model: `<system-reminder>` text.

`register_renderers()` adds them to `queryloop.messages.attachments`' registry (importing
`queryloop.context` does it). `file` and `directory` attachments use the messages package's
built-in renderers (a synthetic Read call, a listing).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ..messages.attachments import RenderContext, RenderedAttachment, register_attachment_renderer
from ..messages.types import AttachmentMessage
from .deltas import LISTINGS
from .facts import FACTS
from .kinds import AttachmentType

TextRenderer = Callable[[Mapping[str, Any]], str]


def render_queued_command(data: Mapping[str, Any]) -> str:
    """A prompt the user queued while the model was busy."""
    return (
        "The user sent the following message while you were working:\n"
        f"{data.get('prompt', '')}\n\n"
        "Please address this message and continue with your tasks."
    )


def render_task_notification(data: Mapping[str, Any]) -> str:
    """A background task finished (Claude Code's `<task-notification>` shape)."""
    kind = "Background agent" if data.get("task_type") == "local_agent" else "Background command"
    lines = [
        "<task-notification>",
        f"<task-id>{data.get('task_id', '')}</task-id>",
        f"<output-file>{data.get('output_file', '')}</output-file>",
        f"<status>{data.get('status', '')}</status>",
        f'<summary>{kind} "{data.get("description", "")}" {data.get("summary", "")}</summary>',
    ]
    result = str(data.get("result") or "").strip()
    if result:
        lines.append(f"<result>\n{result}\n</result>")
    lines.append("</task-notification>")
    lines.append(
        "Read the output file (or call TaskOutput) to retrieve the full output."
        if not result
        else "The agent's final report is above."
    )
    return "\n".join(lines)


def render_edited_file(data: Mapping[str, Any]) -> str:
    """A file the agent read changed on disk (the user, a formatter, another process)."""
    head = (
        f"Note: {data.get('path')} was modified, either by the user or by a linter. This change "
        "was intentional, so take it into account as you proceed (don't revert it unless the "
        "user asks you to). Don't tell the user this, since they are already aware."
    )
    if data.get("too_large"):
        return f"{head} It is {data.get('size')} bytes now; Read the parts you need."
    if data.get("diff"):
        return f"{head} Here are the relevant changes:\n{data['diff']}"
    more = "\n... (more lines; Read the file to see them)" if data.get("truncated") else ""
    return f"{head} Its content now begins:\n{data.get('snippet', '')}{more}"


def render_nested_memory(data: Mapping[str, Any]) -> str:
    """Project instructions from a folder the agent is working in."""
    return f"Contents of {data.get('path')}:\n\n{str(data.get('content', '')).strip()}"


def render_todo_reminder(data: Mapping[str, Any]) -> str:
    """The todo list has not been touched for a while."""
    text = (
        "The TodoWrite tool hasn't been used recently. If you're working on tasks that would "
        "benefit from tracking progress, consider using the TodoWrite tool to track progress. "
        "Also consider cleaning up the todo list if it has become stale and no longer matches "
        "what you are working on. Only use it if it's relevant to the current work. This is "
        "just a gentle reminder - ignore if not applicable. Make sure that you NEVER mention "
        "this reminder to the user."
    )
    todos = data.get("todos") or []
    if todos:
        text += "\n\nHere are the existing contents of your todo list:\n\n" + json.dumps(todos)
    return text


def render_context_usage(data: Mapping[str, Any]) -> str:
    """The conversation is close to the context window."""
    used = int(data.get("used_tokens", 0))
    window = data.get("context_window")
    if window:
        pct = round(100 * used / int(window))
        left = data.get("remaining_tokens")
        text = f"Context usage: {used} of {window} tokens ({pct}%), {left} left."
    else:
        text = f"Context usage: {used} tokens."
    return (
        f"{text} Older tool results may be cleared or the conversation summarized soon: keep "
        "what you still need in your replies and avoid reading large outputs unnecessarily."
    )


def render_diagnostics(data: Mapping[str, Any]) -> str:
    """New linter or type-checker findings."""
    items = "\n".join(str(i) for i in data.get("items") or [])
    return (
        "<new-diagnostics>The following new diagnostic issues were detected:\n"
        f"{items}\n</new-diagnostics>"
    )


def render_mcp_resource(data: Mapping[str, Any]) -> str:
    """An MCP resource the user @-mentioned."""
    return (
        f"Full contents of resource {data.get('uri')} from MCP server {data.get('server')}:\n"
        f"{data.get('content', '')}"
    )


TEXT_RENDERERS: dict[str, TextRenderer] = {
    AttachmentType.QUEUED_COMMAND: render_queued_command,
    AttachmentType.TASK_NOTIFICATION: render_task_notification,
    **{fact.kind: fact.render for fact in FACTS},
    AttachmentType.EDITED_FILE: render_edited_file,
    AttachmentType.NESTED_MEMORY: render_nested_memory,
    AttachmentType.TODO_REMINDER: render_todo_reminder,
    **{listing.kind: listing.render for listing in LISTINGS},
    AttachmentType.CONTEXT_USAGE: render_context_usage,
    AttachmentType.DIAGNOSTICS: render_diagnostics,
    AttachmentType.MCP_RESOURCE: render_mcp_resource,
}


def as_reminder(
    render: TextRenderer,
) -> Callable[[AttachmentMessage, RenderContext], RenderedAttachment | None]:
    """Adapt a data -> text function to the registry; empty text drops the attachment."""

    def renderer(message: AttachmentMessage, context: RenderContext) -> RenderedAttachment | None:
        text = render(message.attachment.data)
        return RenderedAttachment.reminder(text) if text.strip() else None

    return renderer


def register_renderers() -> None:
    """Register every renderer of this package (idempotent)."""
    for kind, render in TEXT_RENDERERS.items():
        register_attachment_renderer(str(kind), as_reminder(render))
