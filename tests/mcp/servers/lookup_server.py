"""A real MCP server for resume tests: read-only, idempotent and side-effect tools.

`lookup` is annotated readOnlyHint and can be slow; with $LOOKUP_MARKERS set it writes marker
files `<key>.start.<pid>` and `<key>.end.<pid>` holding its client's pid, so a test can kill
the client at a precise moment. `--many N` adds N tools: a large set for the tool-search
threshold.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

server = MCPServer("lookup", instructions="Use lookup to read values by key.")


def _mark(key: str, stage: str) -> None:
    """`<key>.<stage>.<pid>` holding the parent's pid (the client that started this server)."""
    folder = os.environ.get("LOOKUP_MARKERS")
    if folder:
        (Path(folder) / f"{key}.{stage}.{os.getpid()}").write_text(str(os.getppid()))


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def lookup(key: str, delay: float = 0.0) -> str:
    """Read the value stored under a key."""
    _mark(key, "start")
    await asyncio.sleep(delay)
    _mark(key, "end")
    return f"value-{key}"


@server.tool(annotations=ToolAnnotations(idempotent_hint=True))
def put(key: str, value: str) -> str:
    """Store a value under a key (idempotent: the same put twice changes nothing more)."""
    return f"stored {key}"


@server.tool()
def append(key: str, value: str) -> str:
    """Append to a key's log (not idempotent)."""
    return f"appended to {key}"


_DETAIL = (
    "The query is matched against titles, bodies and tags; quoted phrases match exactly, a "
    "leading minus excludes a term, and field:value restricts a term to one field. Results "
    "are ordered by relevance, then by date, newest first. Use a small limit while exploring."
)


def _add_many(count: int) -> None:
    for index in range(count):

        def handler(query: str, limit: int = 10, index: int = index) -> str:
            return f"tool {index}: {query} ({limit})"

        server.add_tool(
            handler,
            name=f"tool_{index:03d}",
            description=(
                f"Tool number {index} of a large catalogue: searches records of kind {index} "
                "by a free-text query and returns at most `limit` matching rows. " + _DETAIL
            ),
        )


if __name__ == "__main__":
    if "--many" in sys.argv:
        _add_many(int(sys.argv[sys.argv.index("--many") + 1]))
    server.run()
