"""`McpServerConfig`: how to reach one MCP server, the input of `tools.mcp.McpManager`.

A module of its own, without the MCP SDK, so that reading the configuration
(`queryloop.config.mcp`, which builds these from `.mcp.json` and `--mcp-config`) does not pay
for the client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """How to reach one MCP server."""

    name: str
    transport: Literal["stdio", "http", "sse"] = "stdio"
    """`http` is streamable HTTP; `sse` the older HTTP+SSE transport (a GET event stream
    and POSTs to the endpoint it names), which Claude Code still reads as `"type": "sse"`."""
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    source: str = ""
    """The file it came from (or `sdk`)."""
