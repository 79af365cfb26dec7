"""Running the real `queryloop` command against a local MessagesServer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

COMMAND = [sys.executable, "-m", "queryloop.cli.main"]


def cli_env(base_url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    """A clean environment: our server, a dummy key, tmp_path/home as QUERYLOOP_HOME and
    tmp_path/claude as Claude Code's user folder (CLAUDE_CONFIG_DIR)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.pop("QUERYLOOP_MODEL", None)
    env.update(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="test-key",
        QUERYLOOP_HOME=str(tmp_path / "home"),
        CLAUDE_CONFIG_DIR=str(tmp_path / "claude"),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def project(tmp_path: Path) -> Path:
    """The working folder for a test run."""
    folder = tmp_path / "proj"
    folder.mkdir(exist_ok=True)
    return folder


def run_cli(
    base_url: str, tmp_path: Path, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    """Run `queryloop ARGS` in tmp_path/proj and wait for it."""
    return subprocess.run(
        [*COMMAND, *args],
        cwd=project(tmp_path),
        env=cli_env(base_url, tmp_path),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=90,
    )


def json_lines(stdout: str) -> list[dict[str, Any]]:
    """Parse stream-json output; every line must be one JSON object."""
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def user_texts(body: dict[str, Any]) -> list[str]:
    """All text in the user messages of a recorded request body."""
    out: list[str] = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
            continue
        for block in content:
            if block.get("type") == "text":
                out.append(block["text"])
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                out.append(inner if isinstance(inner, str) else json.dumps(inner))
    return out
