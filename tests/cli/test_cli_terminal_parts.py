"""The terminal's parts (issue 13, section 4) on real files, a real console and real HTTP:
spinner text, diffs, completion, [a]lways rules, resumed exchanges, the status line,
connection errors that name the URL, and a base URL without a key."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from queryloop.cli.always import always_offer, save_local_rule
from queryloop.cli.commands import COMMANDS
from queryloop.cli.completion import command_candidates, file_candidates, subcommand_candidates
from queryloop.cli.diffs import applied_diff, diff_stats, proposed_diff
from queryloop.cli.preload import provider_module, startup_notices
from queryloop.cli.render import Renderer, _Waiting
from queryloop.cli.render_text import (
    compact_headroom,
    diff_markup,
    recent_exchanges,
    status_text,
    waiting_text,
)
from queryloop.messages import assistant_message, tool_result_message, user_message
from queryloop.messages.blocks import TextBlock, ToolResultBlock, ToolUseBlock
from queryloop.messages.usage import Usage
from queryloop.permissions import PermissionRequest
from queryloop.permissions.modes import PermissionMode
from queryloop.providers import ModelRequest, ProviderConnectionError, RetryPolicy, complete
from queryloop.providers.anthropic import AnthropicProvider
from queryloop.testing import MessagesServer, text, turn


def test_spinner_text_moves_with_the_clock_and_counts_tokens() -> None:
    assert waiting_text("Thinking", 0.4, 0) == "Thinking… 0s · Ctrl-C to interrupt"
    assert (
        waiting_text("Writing", 12.7, 1234) == "Writing… 12s · ↓ 1,234 tokens · Ctrl-C to interrupt"
    )
    now = [100.0]
    buf = io.StringIO()
    console = Console(file=buf, width=100, force_terminal=True, color_system=None)
    renderer = Renderer(console, clock=lambda: now[0])
    renderer.start_turn()  # the spinner starts at once, before any token
    assert renderer._status is not None
    renderer.pause()
    now[0] += 7.2
    renderer._chars = 400  # 400 characters streamed so far: about 100 tokens
    console.print(_Waiting(renderer, "Thinking"))
    assert "Thinking… 7s · ↓ 100 tokens" in buf.getvalue()


def test_edit_diff_before_and_after(tmp_path: Path) -> None:
    source = tmp_path / "calc.py"
    source.write_text("".join(f"line{i}\n" for i in range(1, 21)) + "x = 1\n")
    edit = {"file_path": "calc.py", "old_string": "x = 1", "new_string": "x = 2\ny = 3"}
    before = proposed_diff("Edit", edit, tmp_path)
    assert before is not None
    assert "-x = 1" in before and "+x = 2" in before and "+y = 3" in before
    assert before[0] == "--- a/calc.py" and any(line.startswith("@@ -18,4") for line in before)
    assert diff_stats(before) == (2, 1)
    source.write_text(source.read_text().replace("x = 1", "x = 2\ny = 3"))
    after = applied_diff("Edit", edit, tmp_path)
    assert after is not None and "-x = 1" in after
    assert "@@ -18,4 +18,5 @@" in after  # whole lines, context, the file's line numbers
    new_file = proposed_diff("Write", {"file_path": "new.txt", "content": "a\nb\n"}, tmp_path)
    assert new_file is not None and "+a" in new_file and "+b" in new_file
    assert proposed_diff("Bash", {"command": "ls"}, tmp_path) is None
    assert proposed_diff("Edit", {**edit, "old_string": "missing"}, tmp_path) is None
    marked = diff_markup(before)
    assert any(m.startswith("[red]-x = 1") for m in marked)
    assert any(m.startswith("[green]+x = 2") for m in marked)


def test_renderer_shows_an_applied_edit_as_a_diff(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("new text\n")
    buf = io.StringIO()
    renderer = Renderer(Console(file=buf, width=100, force_terminal=False), cwd=tmp_path)
    edit = {"file_path": "a.txt", "old_string": "old", "new_string": "new"}
    call = ToolUseBlock(id="e1", name="Edit", input=edit)
    renderer.tool_call(call)
    result = tool_result_message("e1", "The file was updated")
    assert not isinstance(result.content, str)
    block = result.content[0]
    assert isinstance(block, ToolResultBlock)
    renderer.tool_result(block)
    out = buf.getvalue()
    assert "1 added, 1 removed" in out and "-old" in out and "+new" in out


def test_completion_of_commands_and_files(tmp_path: Path) -> None:
    commands = {"compact": "summarise", "cost": "costs", "clear": "fresh"}
    assert [c for c, _ in command_candidates("/co", commands)] == ["/compact", "/cost"]
    subcommands = {"mcp": COMMANDS["mcp"].subcommands}
    assert subcommand_candidates("/mcp ", subcommands) == ["/mcp login", "/mcp reconnect"]
    assert subcommand_candidates("/mcp re", subcommands) == ["/mcp reconnect"]
    assert subcommand_candidates("/mcp login gu", subcommands) == []
    assert subcommand_candidates("/cost ", subcommands) == []
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("")
    (tmp_path / "setup.cfg").write_text("")
    (tmp_path / ".env").write_text("")
    (tmp_path / "node_modules").mkdir()
    assert file_candidates(tmp_path, "s") == ["setup.cfg", "src/"]
    assert file_candidates(tmp_path, "src/m") == ["src/main.py"]
    assert file_candidates(tmp_path, "") == ["setup.cfg", "src/"]  # no hidden, no node_modules
    assert file_candidates(tmp_path, ".e") == [".env"]
    assert file_candidates(tmp_path, "../") == []  # never outside the folder


def _request(tmp_path: Path, tool: str, input: dict[str, object], rule: str) -> PermissionRequest:
    return PermissionRequest(tool, input, "asks", rule, tmp_path, PermissionMode.DEFAULT)


def test_always_offers_a_rule_only_where_it_would_match(tmp_path: Path) -> None:
    simple = always_offer(_request(tmp_path, "Bash", {"command": "npm test"}, "Bash(npm test:*)"))
    assert simple.rule == "Bash(npm test:*)"
    chained = always_offer(
        _request(tmp_path, "Bash", {"command": "npm test && rm -rf build"}, "Bash(npm test:*)")
    )
    assert chained.rule is None and "never approves a command like that" in chained.why_not
    edit = always_offer(_request(tmp_path, "Edit", {"file_path": "a.py"}, "Edit(a.py)"))
    assert edit.rule == "Edit(a.py)"


def test_save_local_rule_keeps_the_rest_of_the_file(tmp_path: Path) -> None:
    settings = tmp_path / ".queryloop" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {"A": "1"}, "permissions": {"deny": ["Read(.env)"]}}))
    assert save_local_rule(tmp_path, "Bash(npm test:*)") == settings
    save_local_rule(tmp_path, "Bash(npm test:*)")  # twice: stored once
    data = json.loads(settings.read_text())
    assert data == {
        "env": {"A": "1"},
        "permissions": {"deny": ["Read(.env)"], "allow": ["Bash(npm test:*)"]},
    }
    settings.write_text("[1, 2]")
    with pytest.raises(ValueError):
        save_local_rule(tmp_path, "Bash(ls:*)")
    assert settings.read_text() == "[1, 2]"


def test_recent_exchanges_skip_tool_results_and_meta() -> None:
    tool = ToolUseBlock(id="t1", name="Bash", input={"command": "ls"})
    messages = [
        user_message("first question"),
        assistant_message([TextBlock("looking"), tool]),
        tool_result_message("t1", "a.py"),
        assistant_message([TextBlock("first answer")]),
        user_message("context", is_meta=True),
        user_message("second question"),
        assistant_message([TextBlock("second answer")]),
        user_message("third question"),
    ]
    assert recent_exchanges(messages, 2) == [
        ("second question", "second answer"),
        ("third question", ""),
    ]
    assert recent_exchanges(messages)[0] == ("first question", "first answer")


def test_status_line_is_relative_to_the_compaction_threshold() -> None:
    early = {"window": 200_000, "free": 150_000, "autocompact": 167_000}
    later = {"window": 200_000, "free": 80_000, "autocompact": 167_000}
    assert compact_headroom(early) == pytest.approx(1 - 50_000 / 167_000)
    assert compact_headroom({"window": 200_000, "free": 0, "autocompact": 167_000}) == 0.0
    line = status_text("m", early, Usage(), 0.0)
    assert "70% context left before auto-compact" in line
    assert "28% context left" in status_text("m", later, Usage(), 0.0)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_connection_error_names_the_url_and_what_to_check() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    request = ModelRequest(
        model="claude-sonnet-5-5",
        max_tokens=10,
        messages=[{"role": "user", "content": "hi"}],  # type: ignore[typeddict-item]
    )
    async with AnthropicProvider(api_key="k", base_url=url, retry=RetryPolicy(max_retries=0)) as p:
        with pytest.raises(ProviderConnectionError) as info:
            await complete(p, request)
    message = str(info.value)
    assert f"{url}/v1/messages" in message
    assert "ANTHROPIC_BASE_URL" in message and "server is running" in message


async def test_a_base_url_without_a_key_is_used_without_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    with MessagesServer([turn(text("proxied"))]) as server:
        env = {"ANTHROPIC_BASE_URL": server.base_url}
        notices = startup_notices(None, env)
        assert len(notices) == 1 and server.base_url in notices[0] and "without a key" in notices[0]
        assert startup_notices(None, {**env, "ANTHROPIC_API_KEY": "k"}) == []
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        async with AnthropicProvider() as provider:
            request = ModelRequest(
                model="claude-sonnet-5-5",
                max_tokens=10,
                messages=[{"role": "user", "content": "hi"}],  # type: ignore[typeddict-item]
            )
            response = await complete(provider, request)
        headers = {k.lower() for k in server.recorded[0].headers}
    assert response.content[0].text == "proxied"  # type: ignore[union-attr]
    assert "x-api-key" not in headers and "authorization" not in headers


def test_preload_picks_the_sdk_the_model_needs() -> None:
    env = {"ANTHROPIC_API_KEY": "k", "OPENAI_BASE_URL": "http://localhost:1/v1"}
    assert provider_module("claude-sonnet-5-5", env) == "queryloop.providers.anthropic"
    assert provider_module("ollama:qwen", env) == "queryloop.providers.openai_compat"
    assert provider_module("gpt-x", {}) is None  # not configured: the real start-up says why


def test_preload_builds_the_tls_context_beside_the_imports() -> None:
    # A fresh interpreter: the context is the process's. The preload thread builds it (OpenSSL
    # reads the certificates without the GIL, beside the main thread's imports), so the
    # provider finds it built; threads asking at once share one.
    code = """
import threading
from queryloop.cli.preload import start_preload
from queryloop.providers import tls
thread = start_preload("claude-sonnet-5-5", {"ANTHROPIC_API_KEY": "k"})
assert thread is not None
thread.join()
assert len(tls._context) == 1, "the preload thread did not build the TLS context"
seen = []
workers = [threading.Thread(target=lambda: seen.append(tls.shared_tls_context())) for _ in range(8)]
for w in workers: w.start()
for w in workers: w.join()
assert len({id(c) for c in seen}) == 1 and seen[0] is tls._context[0]
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
