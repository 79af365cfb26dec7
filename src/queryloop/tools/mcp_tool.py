"""`McpTool`: one MCP server tool seen through queryloop's Tool protocol."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

import mcp_types as mt
from pydantic import BaseModel, ConfigDict

from ..messages.interruption import Interruption
from .base import (
    DEFAULT_MAX_RESULT_CHARS,
    PASSTHROUGH,
    PermissionDecision,
    ToolContext,
    ToolProgress,
    ToolResult,
)

if TYPE_CHECKING:
    from .base import Tool
    from .mcp import McpManager


class McpInput(BaseModel):
    """Any JSON object: the server validates its own arguments against its schema."""

    model_config = ConfigDict(extra="allow")


class McpTool:
    """A server tool named `mcp__<server>__<tool>`; its schema is passed through untouched."""

    input_model: type[BaseModel] = McpInput
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS

    def __init__(self, manager: McpManager, server: str, tool: mt.Tool, name: str) -> None:
        self.manager = manager
        self.server = server
        self.remote_name = tool.name
        self.name = name
        self.description = tool.description or f"{tool.name} (MCP server {server})"
        self._schema = tool.input_schema
        hints = tool.annotations
        self._read_only = bool(hints is not None and hints.read_only_hint)
        idempotent = bool(hints is not None and hints.idempotent_hint)
        self.rerun_on_resume = self._read_only or idempotent
        """Safe to run again after an interrupt (`queryloop.loop.resume`)."""

    def input_schema(self) -> dict[str, Any]:
        """The server's schema object itself, so requests stay byte-identical."""
        return self._schema

    def is_concurrency_safe(self, input: Any) -> bool:
        """Only tools the server marks readOnlyHint run in parallel."""
        return self._read_only

    def is_read_only(self, input: Any) -> bool:
        return self._read_only

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        return None

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        return PASSTHROUGH

    def permission_subject(self, input: Any) -> str | None:
        return None

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        """Call the server; an abort returns at once with an is_error result."""
        args = _arguments(input)
        call = asyncio.ensure_future(self.manager.call_tool(self.server, self.remote_name, args))
        aborted = asyncio.ensure_future(ctx.abort.wait())
        try:
            await asyncio.wait({call, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            aborted.cancel()
            if not call.done():
                call.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await call
        if call.cancelled():
            stopped = Interruption.TOOL_STOPPED
            yield ToolResult(stopped.text(self.name), is_error=True, interrupted=stopped)
        else:
            yield call.result()


def _arguments(input: Any) -> Mapping[str, Any]:
    if isinstance(input, BaseModel):
        return input.model_dump(exclude_unset=True)
    return dict(input) if isinstance(input, Mapping) else {}


if TYPE_CHECKING:  # mypy proves McpTool satisfies the Tool protocol

    def _conforms(tool: McpTool) -> Tool:
        return tool
