"""Fixtures for the sandbox tests: the real bwrap (skipped, saying why, only where it cannot
run at all), a local HTTP server on a free port, and a sandboxed shell."""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest


@cache
def bwrap_problem() -> str | None:
    """Why bwrap cannot run here (probed once), or None."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bwrap is not installed (./run test installs the Debian package bubblewrap)"
    done = subprocess.run([bwrap, "--ro-bind", "/", "/", "true"], capture_output=True, text=True)
    if done.returncode != 0:
        return f"bwrap cannot create namespaces here: {done.stderr.strip()}"
    return None


@pytest.fixture
def bwrap() -> str:
    """The path of a working bwrap; the test is skipped where there is none."""
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(problem)
    found = shutil.which("bwrap")
    assert found is not None
    return found


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"served {self.path} for {self.headers.get('Host')}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[int]:
    """A plain HTTP server on 127.0.0.1 (a free port); yields the port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder


def clean_env(**extra: str) -> dict[str, str]:
    """Our environment without proxy variables (the test decides them)."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(extra)
    return env
