"""The attachment renderer registry: how each attachment type reaches the model.

An attachment message holds typed context (`Attachment(type, data)`). Normalization turns it
into API content through the renderer registered for its type:

* reminder text, wrapped in `<system-reminder>` tags (most types), or
* a synthetic file read: an assistant `tool_use` of the "Read" tool and its `tool_result`, the
  format the model already knows for file contents.

Synthetic ids derive from the attachment message's uuid, so the same history normalizes to
byte-identical requests on every turn (the prompt cache depends on it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

from .blocks import ToolResultBlock, ToolUseBlock
from .types import AttachmentMessage

READ_TOOL_NAME = "Read"


@dataclass(frozen=True, slots=True)
class RenderContext:
    """What a renderer may know about the request being built."""

    tool_names: frozenset[str] = frozenset()
    thinking_enabled: bool = False


@dataclass(frozen=True, slots=True)
class RenderedAttachment:
    """An attachment as API content: reminder `text`, or a `tool_use` with its `tool_result`."""

    text: str | None = None
    tool_use: ToolUseBlock | None = None
    tool_result: ToolResultBlock | None = None

    @classmethod
    def reminder(cls, body: str) -> RenderedAttachment:
        """Reminder text; `body` is wrapped in `<system-reminder>` tags."""
        return cls(text=system_reminder(body))

    @classmethod
    def tool_call(cls, tool_use: ToolUseBlock, tool_result: ToolResultBlock) -> RenderedAttachment:
        """A synthetic tool call and its result (they must share the id)."""
        if tool_use.id != tool_result.tool_use_id:
            raise ValueError(
                f"tool_result id {tool_result.tool_use_id!r} does not match "
                f"tool_use {tool_use.id!r}"
            )
        return cls(tool_use=tool_use, tool_result=tool_result)


AttachmentRenderer: TypeAlias = Callable[
    [AttachmentMessage, RenderContext], "RenderedAttachment | None"
]
"""Renders one attachment message; returning None drops it."""

_REGISTRY: dict[str, AttachmentRenderer] = {}


def system_reminder(body: str) -> str:
    """`body` wrapped in the `<system-reminder>` tags the model treats as system context."""
    return f"<system-reminder>\n{body}\n</system-reminder>"


def stable_tool_use_id(message_uuid: str) -> str:
    """A tool_use id derived only from the attachment's uuid (stable across requests)."""
    digest = hashlib.sha256(message_uuid.encode("utf-8")).hexdigest()[:24]
    return f"toolu_att_{digest}"


def register_attachment_renderer(type: str, renderer: AttachmentRenderer) -> None:
    """Register (or replace) the renderer for attachments of `type`."""
    if not type:
        raise ValueError("attachment type must be a non-empty string")
    _REGISTRY[type] = renderer


def unregister_attachment_renderer(type: str) -> None:
    """Remove the renderer for `type`; unknown types then fall back to the default."""
    _REGISTRY.pop(type, None)


def get_attachment_renderer(type: str) -> AttachmentRenderer:
    """The renderer for `type`, or the fallback that renders a str `content` as a reminder."""
    return _REGISTRY.get(type, render_fallback)


def render_attachment(
    message: AttachmentMessage, context: RenderContext
) -> RenderedAttachment | None:
    """Render one attachment message through the registry."""
    return get_attachment_renderer(message.attachment.type)(message, context)


# -- built-in renderers ---------------------------------------------------------------


def render_fallback(
    message: AttachmentMessage, context: RenderContext
) -> RenderedAttachment | None:
    """Unknown types: a str `content` becomes a reminder; anything else is dropped."""
    content = message.attachment.data.get("content")
    if isinstance(content, str) and content.strip():
        return RenderedAttachment.reminder(content)
    return None


def render_text(message: AttachmentMessage, context: RenderContext) -> RenderedAttachment | None:
    """`text` / `system_reminder`: `data.content` as reminder text."""
    return render_fallback(message, context)


def render_directory(
    message: AttachmentMessage, context: RenderContext
) -> RenderedAttachment | None:
    """`directory`: `data.path`, `data.listing` (and a `truncated` flag) as reminder text."""
    data = message.attachment.data
    path = str(data.get("path", ""))
    listing = data.get("listing", "")
    if not isinstance(listing, str):
        listing = "\n".join(str(item) for item in listing)
    note = "\n[Listing truncated.]" if data.get("truncated") else ""
    return RenderedAttachment.reminder(f"Contents of directory {path}:\n{listing}{note}")


def render_file(message: AttachmentMessage, context: RenderContext) -> RenderedAttachment | None:
    """`file`: a synthetic Read call when it can be carried, otherwise reminder text.

    The Read pair needs the Read tool in the request. With thinking enabled it is never used:
    a synthetic tool call in the last turn would open a tool loop whose first assistant
    message has no thinking block, which the API rejects, and choosing per turn would change
    earlier messages between requests and break the prompt cache.
    """
    data = message.attachment.data
    path = str(data.get("path", ""))
    content = str(data.get("content", ""))
    body = _numbered(content, _int(data.get("start_line"), 1))
    if data.get("truncated"):
        body += "\n[File truncated: only part of it is shown. Read it to see more.]"
    if READ_TOOL_NAME in context.tool_names and not context.thinking_enabled:
        tool_id = stable_tool_use_id(message.uuid)
        return RenderedAttachment.tool_call(
            ToolUseBlock(id=tool_id, name=READ_TOOL_NAME, input=_read_input(path, data)),
            ToolResultBlock(tool_use_id=tool_id, content=body or "(empty file)"),
        )
    return RenderedAttachment.reminder(f"Contents of {path}:\n{body}")


def _read_input(path: str, data: Any) -> dict[str, Any]:
    read: dict[str, Any] = {"file_path": path}
    start, end = data.get("start_line"), data.get("end_line")
    if isinstance(start, int) and start > 1:
        read["offset"] = start
    if isinstance(start, int) and isinstance(end, int) and end >= start:
        read["limit"] = end - start + 1
    return read


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _numbered(content: str, first_line: int) -> str:
    """`cat -n` style numbering, as the Read tool shows files."""
    if not content:
        return ""
    lines = content.splitlines()
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=first_line))


def _register_builtins() -> None:
    register_attachment_renderer("file", render_file)
    register_attachment_renderer("directory", render_directory)
    register_attachment_renderer("text", render_text)
    register_attachment_renderer("system_reminder", render_text)


_register_builtins()
