"""In-process tools: `@tool`, `create_sdk_mcp_server`, and the queryloop tools they become.

The SDK serves these functions to the CLI over an in-memory MCP connection; queryloop has
the tools in its own process already, so each becomes a queryloop `Tool` directly, with
the name the model knows it by in Claude Code, `mcp__<server key>__<tool name>` (the key
of `ClaudeAgentOptions.mcp_servers`). They behave as MCP tools do there: every call asks
for approval unless an allow rule names it (`allowed_tools=["mcp__calc__add"]`), the
permission mode is bypassPermissions, or `can_use_tool` approves it; only tools annotated
`readOnlyHint` run in parallel. Arguments are checked against the tool's JSON schema with
`jsonschema` (the reference validator; the SDK uses it too) before the function runs; a
bad input, an `is_error` result and an exception all reach the model as an error result.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import jsonschema
import mcp_types as mt
from pydantic import BaseModel

from ..tools.base import (
    DEFAULT_MAX_RESULT_CHARS,
    BaseTool,
    PermissionDecision,
    ToolContext,
    ToolProgress,
    ToolResult,
)
from ..tools.mcp_convert import convert_call_result
from ..tools.mcp_tool import McpInput
from .schema import input_schema

T = TypeVar("T")
Handler = Callable[[Any], Awaitable[dict[str, Any]]]


class ToolAnnotations(mt.ToolAnnotations, extra="allow"):
    """MCP tool hints in either spelling (`readOnlyHint=True` or `read_only_hint=True`),
    plus `maxResultSizeChars`: the size up to which a result stays whole in the
    conversation (queryloop's per-tool result limit)."""

    max_result_size_chars: int | None = None


@dataclass
class SdkMcpTool(Generic[T]):
    """A function offered to the model, made by `@tool`."""

    name: str
    description: str
    input_schema: type[T] | dict[str, Any]
    handler: Callable[[T], Awaitable[dict[str, Any]]]
    annotations: mt.ToolAnnotations | None = None


def tool(
    name: str,
    description: str,
    input_schema: type | dict[str, Any],
    annotations: mt.ToolAnnotations | None = None,
) -> Callable[[Handler], SdkMcpTool[Any]]:
    """Declare an in-process tool: `@tool("add", "Add two numbers", {"a": float, "b":
    float})` over `async def add(args) -> {"content": [{"type": "text", "text": ...}]}`.

    `input_schema` is a dict of names to types (all required), a TypedDict, or a JSON
    schema. The function gets the arguments as a dict and returns MCP content (text,
    image, resource) with `"is_error": True` for a failure the model should read."""

    def decorate(handler: Handler) -> SdkMcpTool[Any]:
        if not inspect.iscoroutinefunction(handler):
            raise TypeError(f"@tool {name!r}: the function must be async (async def)")
        return SdkMcpTool(name, description, input_schema, handler, annotations)

    return decorate


@dataclass(frozen=True)
class SdkMcpServer:
    """The `instance` of an in-process server: its name, version and tools."""

    name: str
    version: str
    tools: tuple[SdkMcpTool[Any], ...]


def create_sdk_mcp_server(
    name: str, version: str = "1.0.0", tools: Sequence[SdkMcpTool[Any]] | None = None
) -> dict[str, Any]:
    """An in-process MCP server for `ClaudeAgentOptions.mcp_servers`:
    `mcp_servers={"calc": create_sdk_mcp_server("calculator", tools=[add])}` offers
    `mcp__calc__add`. Returns the SDK's `McpSdkServerConfig` shape
    (`{"type": "sdk", "name": ..., "instance": ...}`)."""
    found = tuple(tools or ())
    names = [t.name for t in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"create_sdk_mcp_server({name!r}): tool names used twice: {twice}")
    return {"type": "sdk", "name": name, "instance": SdkMcpServer(name, version, found)}


class SdkTool(BaseTool[McpInput]):
    """One `@tool` function as a queryloop tool named `mcp__<server>__<tool>`."""

    input_model: type[BaseModel] = McpInput

    def __init__(self, server: str, spec: SdkMcpTool[Any]) -> None:
        self.name = f"mcp__{server}__{spec.name}"
        self.description = spec.description
        self.spec = spec
        self._schema = input_schema(spec.input_schema)
        jsonschema.Draft202012Validator.check_schema(self._schema)  # a broken schema: now
        hints = spec.annotations
        self.read_only = bool(hints is not None and hints.read_only_hint)
        self.concurrency_safe = self.read_only
        size = getattr(hints, "max_result_size_chars", None)
        self.max_result_chars = size if isinstance(size, int) else DEFAULT_MAX_RESULT_CHARS

    def input_schema(self) -> dict[str, Any]:
        return self._schema

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        try:
            jsonschema.validate(_arguments(input), self._schema)
        except jsonschema.ValidationError as exc:
            return f"Input validation error: {exc.message}"
        return None

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        return PermissionDecision("ask", f"{self.name} is an MCP tool and no allow rule names it")

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        try:
            returned = await self.spec.handler(_arguments(input))
        except Exception as exc:  # the model reads it, as from an MCP server
            yield ToolResult(f"Error: {exc}", is_error=True)
            return
        yield _result(self.name, returned)


def server_tools(key: str, config: dict[str, Any]) -> list[SdkTool]:
    """The queryloop tools of one `mcp_servers` entry of type "sdk"."""
    instance = config.get("instance")
    if not isinstance(instance, SdkMcpServer):
        raise TypeError(
            f"mcp_servers[{key!r}]: an in-process server must come from "
            "create_sdk_mcp_server(); queryloop does not serve other mcp.server.Server "
            "instances (run it as a stdio or http server instead)"
        )
    return [SdkTool(key, spec) for spec in instance.tools]


def _arguments(input: Any) -> dict[str, Any]:
    return input.model_dump(exclude_unset=True) if isinstance(input, McpInput) else dict(input)


def _result(name: str, returned: object) -> ToolResult:
    """A handler's `{"content": [...], "is_error": ...}` as a ToolResult (MCP content)."""
    if not isinstance(returned, dict):
        kind = type(returned).__name__
        return ToolResult(f"Error: {name} returned {kind}, expected a dict", is_error=True)
    try:
        parsed = mt.CallToolResult.model_validate(
            {"content": returned.get("content", []), "isError": bool(returned.get("is_error"))}
        )
    except ValueError as exc:
        return ToolResult(f"Error: {name} returned content MCP cannot carry: {exc}", is_error=True)
    return convert_call_result(parsed)
