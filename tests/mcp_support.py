"""Real MCP servers on 127.0.0.1 for tests: a script of `mcp/servers/` in a subprocess on a
free port, stopped when the test ends; and the browser's part of an OAuth login."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

SERVERS = Path(__file__).parent / "mcp" / "servers"


def free_port() -> int:
    """A port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], limit: float = 20) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the MCP server exited early"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the MCP server did not start listening")


@contextmanager
def served(script: str, *args: str) -> Iterator[int]:
    """Run `servers/<script> *args PORT` and yield its port; try another port if a test in a
    parallel worker took it between our probe and the server's bind (the server then exits
    at once)."""
    for _ in range(3):
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, str(SERVERS / script), *args, str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_for_port(port, proc)
        except AssertionError:
            proc.kill()
            proc.wait(timeout=10)
            continue
        try:
            yield port
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        return
    raise AssertionError(f"{script} did not start on any of three free ports")


def follow(url: str) -> None:
    """The browser: open the authorization page, follow its redirect to the callback."""
    page = httpx.get(url, follow_redirects=True, timeout=30)
    assert page.status_code == 200 and "login complete" in page.text, page.text


async def follow_async(url: str) -> None:
    """`follow` for a login's `show` callback (awaited on the caller's event loop)."""
    async with httpx.AsyncClient() as browser:
        page = await browser.get(url, follow_redirects=True, timeout=30)
    assert page.status_code == 200 and "login complete" in page.text, page.text
