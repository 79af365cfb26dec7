"""Turning MCP content (tool results, resources) into queryloop content blocks."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

import mcp_types as mt

from ..messages.blocks import DocumentBlock, ImageBlock, TextBlock
from .base import ToolResult

Block = TextBlock | ImageBlock | DocumentBlock
_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}


def convert_call_result(result: mt.CallToolResult) -> ToolResult:
    """A tools/call result as a ToolResult (text, images, embedded resources; is_error kept)."""
    blocks = tuple(b for item in result.content for b in convert_content(item))
    content: str | tuple[Block, ...]
    if all(isinstance(b, TextBlock) for b in blocks):
        content = "\n".join(b.text for b in blocks if isinstance(b, TextBlock))
    else:
        content = blocks
    if not blocks and result.structured_content is not None:
        content = str(result.structured_content)
    return ToolResult(content, is_error=result.is_error, data=result.structured_content)


def convert_content(item: Any) -> list[Block]:
    """One MCP content item as blocks; unknown kinds become a short text note."""
    if isinstance(item, mt.TextContent):
        return [TextBlock(text=item.text)]
    if isinstance(item, mt.ImageContent):
        return [_image(item.data, item.mime_type)]
    if isinstance(item, mt.EmbeddedResource):
        return convert_resource_contents([item.resource])
    if isinstance(item, mt.ResourceLink):
        return [TextBlock(text=f"[resource link: {item.uri} ({item.name})]")]
    if isinstance(item, mt.AudioContent):
        return [TextBlock(text=f"[audio content ({item.mime_type}) omitted]")]
    return [TextBlock(text=f"[unsupported MCP content: {type(item).__name__}]")]


def convert_resource_contents(contents: Sequence[Any]) -> list[Block]:
    """resources/read contents (or an embedded resource) as blocks."""
    blocks: list[Block] = []
    for part in contents:
        mime = part.mime_type or ""
        if isinstance(part, mt.TextResourceContents):
            blocks.append(TextBlock(text=f'<resource uri="{part.uri}">\n{part.text}\n</resource>'))
        elif mime in _IMAGE_TYPES:
            blocks.append(_image(part.blob, mime))
        elif mime == "application/pdf":
            source = {"type": "base64", "media_type": mime, "data": part.blob}
            blocks.append(DocumentBlock(source=source, title=str(part.uri)))
        else:
            size = len(base64.b64decode(part.blob, validate=False)) if part.blob else 0
            blocks.append(
                TextBlock(
                    text=f"[binary resource {part.uri} ({mime or 'unknown type'}), {size} bytes]"
                )
            )
    return blocks


def _image(data: str, mime: str) -> ImageBlock:
    return ImageBlock(source={"type": "base64", "media_type": mime, "data": data})
