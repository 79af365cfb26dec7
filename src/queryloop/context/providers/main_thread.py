"""Phase three, main thread only: a context-usage warning and diagnostics."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...messages.types import Attachment
from ..kinds import AttachmentType

if TYPE_CHECKING:
    from ..attachments import AttachmentContext


async def context_usage(ctx: AttachmentContext) -> list[Attachment]:
    """A `context_usage` warning once `used_tokens` reaches `warning_threshold`."""
    used, threshold = ctx.used_tokens, ctx.warning_threshold
    if used is None or threshold is None or used < threshold:
        return []
    data: dict[str, int] = {"used_tokens": used, "warning_threshold": threshold}
    if ctx.context_window:
        data["context_window"] = ctx.context_window
        data["remaining_tokens"] = max(0, ctx.context_window - used)
    return [Attachment(AttachmentType.CONTEXT_USAGE, data)]


async def diagnostics(ctx: AttachmentContext) -> list[Attachment]:
    """A `diagnostics` attachment with what the diagnostics source reports, if anything."""
    if ctx.diagnostics is None:
        return []
    items = [d for d in await ctx.diagnostics() if d.strip()]
    return [Attachment(AttachmentType.DIAGNOSTICS, {"items": items})] if items else []
