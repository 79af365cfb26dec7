"""A tiny real MCP server for tests: tools, a resource and instructions."""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("echo", instructions="Use echo to repeat text. Use slow only in tests.")

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str, times: int = 1) -> str:
    """Repeat the text."""
    return " ".join([text] * times)


@server.tool()
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ToolError(reason)


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """Returns text and an image."""
    return [TextContent(text="a picture"), ImageContent(data=PNG, mime_type="image/png")]


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps, then answers."""
    await asyncio.sleep(seconds)
    return "done"


@server.tool()
def die() -> str:
    """Exits the server process abruptly."""
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.resource("memo://notes", name="notes", mime_type="text/plain")
def notes() -> str:
    """Project notes."""
    return "remember the milk"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) > 2 and sys.argv[1] == "sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
