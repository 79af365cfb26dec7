"""Hooks through the real `queryloop` command: a Claude Code style settings file in print mode
(exec-form args, http, PostToolUseFailure, SessionEnd, an agent handler it cannot run), and
the REPL's Notification while a permission question waits."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from queryloop.cli.args import parse_args
from queryloop.cli.repl import Repl
from queryloop.testing import MessagesServer, text, tool_use, turn


def run_cli(base_url: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`queryloop ARGS` in tmp_path/proj against the local server, with a clean env."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.pop("QUERYLOOP_MODEL", None)
    env.update(ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="test-key",
               QUERYLOOP_HOME=str(tmp_path / "home"))  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "queryloop.cli.main", *args],
        cwd=tmp_path / "proj", env=env, capture_output=True, text=True, timeout=90,
    )  # fmt: skip


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[Any]]]:
    seen: list[Any] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", seen
    finally:
        server.shutdown()
        server.server_close()


def test_print_mode_runs_a_claude_code_settings_file(
    tmp_path: Path, endpoint: tuple[str, list[Any]]
) -> None:
    url, posted = endpoint
    proj = tmp_path / "proj"
    proj.mkdir()
    log = tmp_path / "events.jsonl"
    record = [
        sys.executable,
        "-c",
        f"import sys; open({str(log)!r}, 'a').write(sys.stdin.read() + '\\n')",
    ]
    command = {"type": "command", "command": record[0], "args": record[1:]}
    settings = {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "http", "url": url}]}],
            "PostToolUseFailure": [{"hooks": [{**command, "statusMessage": "Noting the failure"}]}],
            "SessionEnd": [{"hooks": [command]}],
            "Stop": [{"hooks": [{"type": "agent", "prompt": "Check the work. $ARGUMENTS"}]}],
        }
    }
    (proj / ".queryloop").mkdir()
    (proj / ".queryloop/settings.json").write_text(json.dumps(settings))
    script = [turn(tool_use("Bash", {"command": "exit 4"})), turn(text("It failed."))]
    with MessagesServer(script) as server:
        done = run_cli(
            server.base_url, tmp_path, "-p", "run it", "--trust",
            "--permission-mode", "bypassPermissions", "--output-format", "json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "It failed."
    assert [e["tool_input"]["command"] for e in posted] == ["exit 4"]
    logged = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert [e["hook_event_name"] for e in logged] == ["PostToolUseFailure", "SessionEnd"]
    assert "'agent' hooks are not supported" in done.stderr


async def test_repl_notification_while_a_permission_question_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj, home = tmp_path / "proj", tmp_path / "home"
    proj.mkdir()
    home.mkdir()
    # One file per hook run: two runs appending to one log can interleave (the REPL may exit,
    # and SessionEnd's hook write, while the Notification hook is still writing).
    logs = tmp_path / "notify"
    logs.mkdir()
    hook = {"type": "command", "command": f'cat > "$(mktemp {logs}/run.XXXXXX)"'}

    def events() -> list[dict[str, Any]]:
        found = []
        for path in logs.iterdir():
            try:
                found.append(json.loads(path.read_text()))
            except ValueError:  # still being written
                pass
        return found

    (home / "settings.json").write_text(json.dumps({"hooks": {
        "Notification": [{"matcher": "permission_prompt", "hooks": [hook]}],
        "SessionEnd": [{"hooks": [hook]}],
    }}))  # fmt: skip
    script = [turn(tool_use("Bash", {"command": "echo hi"})), turn(text("Not run."))]
    with MessagesServer(script) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("QUERYLOOP_HOME", str(home))
        monkeypatch.delenv("QUERYLOOP_MODEL", raising=False)
        inputs = ["run it"]

        async def read_line(prompt: str) -> str:
            if "[y]es" in prompt:  # the question waits until its notification went out
                for _ in range(400):
                    if events():
                        break
                    await asyncio.sleep(0.025)
                return "n"
            if not inputs:
                raise EOFError
            return inputs.pop(0)

        options = parse_args(["--cwd", str(proj)])
        assert options is not None
        repl = Repl(options, console=Console(file=io.StringIO(), width=120), read_line=read_line)
        repl.notify_after_s = 0.05
        assert await repl.run() == 0
    runs = {e["hook_event_name"]: e for e in events()}
    assert sorted(runs) == ["Notification", "SessionEnd"] and len(events()) == 2
    notified = runs["Notification"]
    assert notified["notification_type"] == "permission_prompt" and "Bash" in notified["message"]
    assert runs["SessionEnd"]["reason"] == "prompt_input_exit"
