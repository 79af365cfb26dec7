"""stdio for the protocol: stdout carries protocol messages only, and bad lines get errors.

`claim_stdio` moves the protocol to private copies of descriptors 0 and 1 and points the
originals at stderr and /dev/null, so nothing else in the process — a stray `print`, a
library's warning, a tool's child process that inherits stdout — can write into the
protocol stream or read the client's messages. Logs go to stderr.

`StrictNdjsonTransport` reads newline-delimited JSON-RPC as `acp.connection.Connection`
expects, but answers a line that is not JSON with a JSON-RPC parse error (-32700) and one
that is not a JSON-RPC message with "invalid request" (-32600), and keeps reading; the
package's own stdio transport only logs such lines, leaving the client waiting.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from dataclasses import dataclass
from typing import Any

from acp.task import MessageSender, TaskSupervisor

log = logging.getLogger("queryloop.acp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
LINE_LIMIT = 50 * 1024 * 1024
"""The longest line read (the package's default too: prompts may carry images)."""


@dataclass(frozen=True)
class ProtocolFds:
    """The descriptors the protocol uses after `claim_stdio`."""

    read_fd: int
    write_fd: int


def claim_stdio() -> ProtocolFds:
    """Keep fds 0 and 1 for the protocol; the process's own stdin becomes /dev/null and
    its stdout goes to stderr (see the module docstring)."""
    read_fd, write_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, encoding="utf-8")  # for the life of the process
    return ProtocolFds(read_fd, write_fd)


async def open_streams(fds: ProtocolFds) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """asyncio streams over the protocol's descriptors."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fds.read_fd, "rb", 0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(fds.write_fd, "wb", 0)
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


class StrictNdjsonTransport:
    """`acp`'s message transport over byte streams (see the module docstring)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._tasks = TaskSupervisor(source="queryloop.acp.transport")
        self._sender = MessageSender(writer, self._tasks)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line."""
        await self._sender.send(message)

    async def receive(self) -> dict[str, Any] | None:
        """The next well-formed message; None at the end of input."""
        while True:
            line = await self._read_line()
            if line is None:
                return None
            if not line.strip():
                continue
            message, error = _parse(line)
            if message is not None:
                return message
            assert error is not None
            log.warning("answered a malformed message: %s", error["error"]["message"])
            await self.send(error)

    async def close(self) -> None:
        """Flush what is queued and stop writing."""
        await self._sender.close()
        await self._tasks.shutdown()

    async def _read_line(self) -> bytes | None:
        try:
            return await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            return exc.partial or None
        except asyncio.LimitOverrunError as exc:
            # Too long to be a message we take: skip it whole, say so, go on.
            await self._reader.readexactly(exc.consumed)
            await self._reader.readline()
            return b"\x00"  # not JSON: answered with a parse error


def _parse(line: bytes) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The message on `line`, or the JSON-RPC error that answers it."""
    try:
        value = json.loads(line)
    except ValueError as exc:
        return None, _error(None, PARSE_ERROR, "Parse error", f"not JSON: {exc}")
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        ident = value.get("id") if isinstance(value, dict) else None
        detail = 'a JSON-RPC 2.0 message is an object with "jsonrpc": "2.0"'
        return None, _error(ident, INVALID_REQUEST, "Invalid request", detail)
    method, has_id = value.get("method"), "id" in value
    is_call = isinstance(method, str)
    is_response = method is None and has_id and ("result" in value or "error" in value)
    if not (is_call or is_response):
        detail = "a message needs a string method, or an id with a result or an error"
        return None, _error(value.get("id"), INVALID_REQUEST, "Invalid request", detail)
    return value, None


def _error(ident: Any, code: int, message: str, detail: str) -> dict[str, Any]:
    ident = ident if isinstance(ident, str | int) else None
    error = {"code": code, "message": message, "data": {"details": detail}}
    return {"jsonrpc": "2.0", "id": ident, "error": error}
