"""Fixtures for the sandbox tests: the real bwrap (skipped, saying why, only where it cannot
run at all), a local HTTP server on a free port, a sandboxed shell, and `queryloop -p` run
against a scripted model."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import sys
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


def run_cli(
    base_url: str, tmp_path: Path, project: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """`queryloop <args>` in `project` against the scripted model at `base_url`, with the
    queryloop home `tmp_path/home` (`env` adds or overrides variables)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    environ.pop("QUERYLOOP_MODEL", None)
    environ.update(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="test-key",
        QUERYLOOP_HOME=str(tmp_path / "home"),
        **env,
    )
    return subprocess.run(
        [sys.executable, "-m", "queryloop.cli.main", *args],
        cwd=project, env=environ, capture_output=True, text=True, timeout=90,
    )  # fmt: skip


def tool_results(body: dict[str, object]) -> list[str]:
    """The tool results (as JSON text) of one request the scripted model received."""
    out: list[str] = []
    for message in body["messages"]:  # type: ignore[attr-defined]
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                out.append(json.dumps(block.get("content")))
    return out
