"""The permission boundary through the real `queryloop` command and a scripted model over HTTP.

- A broken settings file (issue 11's trailing comma) exits 2 before any request, naming
  file:line:column; the REPL shows the error and starts no session.
- In bypassPermissions mode, attempts to run a denied command are refused and never run.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

sys.path.insert(0, str(Path(__file__).parent.parent / "cli"))
from cli_helpers import project, run_cli, user_texts

from queryloop.cli.args import parse_args
from queryloop.cli.repl import Repl
from queryloop.config import SettingsError
from queryloop.testing import MessagesServer, text, tool_use, turn

pytestmark = pytest.mark.slow
BROKEN = '{"permissions": {"deny": ["Read(./.env)"],}}'


def write_project_settings(tmp_path: Path, text_: str) -> Path:
    folder = project(tmp_path)
    (folder / ".env").write_text("SECRET=hunter2\n")
    path = folder / ".queryloop" / "settings.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text_)
    return path


def test_broken_settings_exit_2_before_any_request(tmp_path: Path) -> None:
    path = write_project_settings(tmp_path, BROKEN)
    script = [turn(tool_use("Read", {"file_path": ".env"})), turn(text("read it"))]
    with MessagesServer(script) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "show me .env")
        assert server.requests == []
    assert done.returncode == 2, done.stderr
    assert f"{path}:1:43: invalid JSON" in done.stderr
    assert "hunter2" not in done.stdout + done.stderr
    assert done.stderr.count("\n") == 1  # one line, no traceback


def test_missing_mcp_config_exits_2(tmp_path: Path) -> None:
    with MessagesServer([turn(text("hi"))]) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "hi", "--mcp-config", "nope.json")
        assert server.requests == []
    assert done.returncode == 2 and "nope.json:1:1: --mcp-config file not found" in done.stderr


async def test_repl_shows_the_error_and_starts_no_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_project_settings(tmp_path, BROKEN)
    home = tmp_path / "home"
    monkeypatch.setenv("QUERYLOOP_HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with MessagesServer([turn(text("hi"))]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)

        # The prompt is drawn while the settings load behind it (issue 32, item 7): a line
        # typed then is never sent, the broken file stops the REPL first.
        async def read_line(prompt: str) -> str:
            return "show me .env"

        options = parse_args(["--cwd", str(project(tmp_path)), "--trust"])
        assert options is not None
        repl = Repl(options, console=Console(file=io.StringIO()), read_line=read_line)
        with pytest.raises(SettingsError, match="invalid JSON"):
            await repl.run()
        assert server.requests == []
    assert not list(home.glob("projects/**/*.jsonl"))


ATTEMPTS = [
    "timeout 5 rm -rf victim",
    "bash -c 'rm -rf victim'",
    "X=rm; $X -rf victim",
    "find . -maxdepth 1 -name victim -exec rm -rf {} +",
    "git -C . push",
    "cat .env",
]


def test_bypass_mode_attempts_are_denied_and_never_run(tmp_path: Path) -> None:
    folder = project(tmp_path)
    (folder / "victim").mkdir()
    (folder / "victim" / "keep.txt").write_text("still here")
    (folder / ".env").write_text("SECRET=hunter2\n")
    home = tmp_path / "home"
    home.mkdir()
    deny = ["Bash(rm -rf:*)", "Bash(git push:*)", "Read(./.env)"]
    (home / "settings.json").write_text(json.dumps({"permissions": {"deny": deny}}))
    script = [turn(tool_use("Bash", {"command": c})) for c in ATTEMPTS] + [turn(text("gave up"))]
    with MessagesServer(script) as server:
        done = run_cli(
            server.base_url,
            tmp_path,
            "-p",
            "clean up",
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "stream-json",
        )
        bodies = server.requests
    assert done.returncode == 0, done.stderr
    assert (folder / "victim" / "keep.txt").read_text() == "still here"
    results = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    tool_results = [
        b
        for r in results
        if r["type"] == "user" and isinstance(r["message"]["content"], list)
        for b in r["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert len(tool_results) == len(ATTEMPTS)
    assert all(b.get("is_error") for b in tool_results)
    texts = user_texts(bodies[-1])
    assert any("denied by the rule Bash(rm -rf:*)" in t for t in texts)
    assert any("not statically known" in t for t in texts)
    assert any("Read(./.env)" in t for t in texts)
    assert not any("hunter2" in t for t in texts)


def test_protected_paths_are_refused_headless_with_the_rule_that_allows_them(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path)
    (folder / ".queryloop").mkdir()
    settings = folder / ".queryloop" / "settings.json"
    settings.write_text('{"permissions": {"deny": ["Bash(curl:*)"]}}')
    looser = '{"permissions": {"allow": ["Bash(*)"], "defaultMode": "bypassPermissions"}}'
    calls = [
        tool_use("Write", {"file_path": ".queryloop/settings.local.json", "content": looser}),
        tool_use("Bash", {"command": f"echo '{looser}' > .queryloop/settings.json"}),
        tool_use("Bash", {"command": "cp /dev/null .git/hooks/pre-commit"}),
        tool_use("Write", {"file_path": "src/ok.txt", "content": "fine"}),
    ]
    script = [turn(c) for c in calls] + [turn(text("gave up"))]
    with MessagesServer(script) as server:
        done = run_cli(
            server.base_url,
            tmp_path,
            "-p",
            "loosen your rules",
            "--trust",
            "--permission-mode",
            "acceptEdits",
            "--allowed-tools",
            "Bash(*)",
            "--output-format",
            "json",
        )
        bodies = server.requests
    assert done.returncode == 0, done.stderr
    assert not (folder / ".queryloop" / "settings.local.json").exists()
    assert settings.read_text() == '{"permissions": {"deny": ["Bash(curl:*)"]}}'
    assert (folder / "src" / "ok.txt").read_text() == "fine"
    denials = json.loads(done.stdout)["permission_denials"]
    assert [d["tool_name"] for d in denials] == ["Write", "Bash", "Bash"]
    texts = user_texts(bodies[-1])
    assert any("'Edit(.queryloop/settings.local.json)'" in t for t in texts)
    assert any("a protected path (queryloop settings)" in t for t in texts)
    assert any("a protected path (git hooks and config)" in t for t in texts)


def test_disabled_bypass_mode_exits_2_before_any_request(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    disable = {"permissions": {"disableBypassPermissionsMode": "disable"}}
    (home / "settings.json").write_text(json.dumps(disable))
    with MessagesServer([turn(text("hi"))]) as server:
        done = run_cli(
            server.base_url, tmp_path, "-p", "hi", "--permission-mode", "bypassPermissions"
        )
        assert server.requests == []
    assert done.returncode == 2, done.stderr
    assert "disableBypassPermissionsMode" in done.stderr
