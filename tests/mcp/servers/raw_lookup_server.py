"""A minimal real MCP server over stdio, written against the protocol itself (no SDK).

It starts in a few milliseconds, which the kill -9 test needs: that test starts a fresh server
for each of its 21 runs. JSON-RPC 2.0, one message per line (the stdio transport): it answers
`initialize`, `ping`, `tools/list` and `tools/call`, and ignores notifications.

`lookup(key, delay)` is annotated readOnlyHint; with $LOOKUP_MARKERS set it writes marker files
`<key>.start.<pid>` and `<key>.end.<pid>` holding its client's pid (see lookup_server.py).

For the start-up and exit tests (tests/cli/test_cli_startup.py): with $MCP_STAMPS set it
appends `pid <pid>` and then `<method> <time.monotonic()>` per request to that file; with
$MCP_STUBBORN=1 it ignores SIGTERM and, once its stdin is closed, stays until SIGKILL.
With $MCP_INSTRUCTIONS set, `initialize` returns them as the server's instructions.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

LOOKUP = {
    "name": "lookup",
    "description": "Read the value stored under a key.",
    "inputSchema": {
        "type": "object",
        "properties": {"key": {"type": "string"}, "delay": {"type": "number", "default": 0}},
        "required": ["key"],
    },
    "annotations": {"readOnlyHint": True},
}


def _mark(key: str, stage: str) -> None:
    folder = os.environ.get("LOOKUP_MARKERS")
    if folder:
        (Path(folder) / f"{key}.{stage}.{os.getpid()}").write_text(str(os.getppid()))


def _call(params: dict[str, Any]) -> dict[str, Any]:
    if params.get("name") != "lookup":
        return {"content": [{"type": "text", "text": "unknown tool"}], "isError": True}
    args = params.get("arguments") or {}
    key = str(args.get("key", ""))
    _mark(key, "start")
    time.sleep(float(args.get("delay") or 0))
    _mark(key, "end")
    return {"content": [{"type": "text", "text": f"value-{key}"}], "isError": False}


def _answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "lookup", "version": "1.0"},
        }
        if os.environ.get("MCP_INSTRUCTIONS"):
            result["instructions"] = os.environ["MCP_INSTRUCTIONS"]
        return result
    if method == "tools/list":
        return {"tools": [LOOKUP]}
    if method == "tools/call":
        return _call(params)
    if method == "ping":
        return {}
    return None


def _stamp(text: str) -> None:
    path = os.environ.get("MCP_STAMPS")
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(text + "\n")


def main() -> None:
    stubborn = os.environ.get("MCP_STUBBORN") == "1"
    if stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _stamp(f"pid {os.getpid()}")
    serve()
    while stubborn:
        time.sleep(1)


def serve() -> None:
    """Answer requests until stdin closes."""
    for line in sys.stdin:
        if not line.strip():
            continue
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # a notification or a response: nothing to answer
        _stamp(f"{message['method']} {time.monotonic()}")
        result = _answer(str(message["method"]), message.get("params") or {})
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": f"no method {message['method']}"}
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
