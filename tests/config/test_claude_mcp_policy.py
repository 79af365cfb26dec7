"""Claude Code's MCP server policy, `allowedMcpServers` / `deniedMcpServers` (issue 22, item 1):
a server the settings block is not started, whichever source configured it (a project's
`.mcp.json`, a plugin, `Agent(mcp_servers=...)`), and a notice names it. Real settings files,
real stdio MCP servers; the agent talks to the local Messages API server."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from file_support import write_json as write
from queryloop import Agent
from queryloop.config import SettingsError, load_workspace
from queryloop.testing import MessagesServer, text, turn

SERVERS = Path(__file__).resolve().parents[1] / "mcp" / "servers"
ECHO = str(SERVERS / "echo_server.py")
QA_KIT = Path(__file__).resolve().parents[1] / "plugins" / "fixtures" / "qa-kit"
MARKS = (
    "import pathlib, runpy, sys; pathlib.Path(sys.argv[1]).touch(); "
    "runpy.run_path(sys.argv[2], run_name='__main__')"
)


@pytest.fixture(autouse=True)
def _env(api_key: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QL_TEST_PYTHON", sys.executable)
    monkeypatch.setenv("QL_TEST_MCP_SERVERS", str(SERVERS))


def managed(data: object) -> Path:
    return write(Path(os.environ["QUERYLOOP_CLAUDE_MANAGED_DIR"]) / "managed-settings.json", data)


def marking(marker: Path) -> dict[str, Any]:
    """A real echo server that leaves `marker` behind when it starts."""
    return {"command": sys.executable, "args": ["-c", MARKS, str(marker), ECHO]}


async def test_a_denied_server_is_not_started_and_the_notice_names_it(tmp_path: Path) -> None:
    managed({"deniedMcpServers": [{"serverName": "blocked"}]})
    started = tmp_path / "blocked-started"
    servers = {"echo": {"command": sys.executable, "args": [ECHO]}, "blocked": marking(started)}
    with MessagesServer([turn(text("done"))]) as server:
        agent = Agent(
            "claude-sonnet-5-5", base_url=server.base_url, cwd=tmp_path, mcp_servers=servers
        )
        try:
            await agent.run("hi")
            notices = list(agent.notices)
        finally:
            await agent.aclose()
        tools = [t["name"] for t in server.requests[0]["tools"]]
    assert "mcp__echo__echo" in tools
    assert not any(t.startswith("mcp__blocked__") for t in tools)
    assert not started.exists(), "the denied server was started"
    assert any("blocked (deniedMcpServers (serverName 'blocked'))" in n for n in notices)


def project(tmp_path: Path, servers: dict[str, Any]) -> Path:
    folder = tmp_path / "proj"
    write(folder / ".mcp.json", {"mcpServers": servers})
    write(folder / ".claude" / "settings.json", {"enableAllProjectMcpServers": True})
    return folder


def started(folder: Path, **kw: Any) -> list[str]:
    return sorted(load_workspace(folder, trust_override=True, **kw).mcp_servers)


def test_the_policy_covers_project_plugin_and_code_servers(tmp_path: Path) -> None:
    folder = project(tmp_path, {"proj": {"command": "python3", "args": ["p.py"]}})
    code = {
        "inline": {"type": "http", "url": "https://mcp.example.com/v1"},
        "legacy": {"type": "sse", "url": "https://old.example.com/sse"},
    }
    every = started(folder, plugin_dirs=[QA_KIT], mcp_servers=code)
    assert every == ["inline", "legacy", "plugin_qa-kit_echo", "proj"]
    managed(
        {
            "deniedMcpServers": [
                {"serverCommand": ["python3", "p.py"]},
                {"serverUrl": "https://*.example.com/*"},
                {"serverName": "plugin_qa-kit_echo"},
            ]
        }
    )
    ws = load_workspace(folder, trust_override=True, plugin_dirs=[QA_KIT], mcp_servers=code)
    assert dict(ws.mcp_servers) == {}
    notice = next(n for n in ws.notices if "MCP servers not started" in n)
    for name in ("proj", "inline", "legacy", "plugin_qa-kit_echo"):
        assert name in notice


@pytest.mark.parametrize(
    ("allowed", "expected"),
    [
        ([], []),
        ([{"serverName": "a"}], ["a"]),
        ([{"serverCommand": ["python3", "b.py"]}], ["b"]),
        # a serverCommand entry makes stdio servers need one: the name no longer admits "a"
        ([{"serverName": "a"}, {"serverCommand": ["python3", "b.py"]}], ["b"]),
        ([{"serverUrl": "http://127.0.0.1:*/mcp"}], ["web"]),
        ([{"serverName": "web"}, {"serverName": "a"}], ["a", "web"]),
    ],
)
def test_allowlist(tmp_path: Path, allowed: list[object], expected: list[str]) -> None:
    folder = project(
        tmp_path,
        {
            "a": {"command": "python3", "args": ["a.py"]},
            "b": {"command": "python3", "args": ["b.py"]},
            "web": {"type": "http", "url": "http://127.0.0.1:8123/mcp"},
        },
    )
    write(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json", {"allowedMcpServers": allowed})
    assert started(folder) == expected


def test_deny_wins_and_lists_merge_over_files(tmp_path: Path) -> None:
    servers = {n: {"command": "python3", "args": [f"{n}.py"]} for n in "abc"}
    folder = project(tmp_path, servers)
    managed({"allowedMcpServers": [{"serverName": "a"}, {"serverName": "b"}]})
    user = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json"
    write(
        user,
        {"allowedMcpServers": [{"serverName": "c"}], "deniedMcpServers": [{"serverName": "b"}]},
    )
    assert started(folder) == ["a", "c"]
    managed({"allowedMcpServers": [{"serverName": "a"}], "allowManagedMcpServersOnly": True})
    assert started(folder) == ["a"]


def test_an_untrusted_project_may_deny_but_not_widen(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    write(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json", {"allowedMcpServers": []})
    code = {"mine": {"command": "python3"}, "other": {"command": "python3", "args": ["o"]}}
    write(folder / ".claude" / "settings.json", {"allowedMcpServers": [{"serverName": "mine"}]})
    assert load_workspace(folder, trust_override=False, mcp_servers=code).mcp_servers == {}
    write(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json", {})
    write(folder / ".claude" / "settings.json", {"deniedMcpServers": [{"serverName": "mine"}]})
    ws = load_workspace(folder, trust_override=False, mcp_servers=code)
    assert sorted(ws.mcp_servers) == ["other"]


def test_a_bad_deny_entry_fails_closed_a_bad_allow_entry_is_dropped(tmp_path: Path) -> None:
    folder = project(tmp_path, {"a": {"command": "python3"}})
    path = managed({"deniedMcpServers": [{"serverName": "a", "serverCommand": ["x"]}]})
    with pytest.raises(SettingsError, match=rf"{path}:2:\d+: deniedMcpServers: each entry"):
        load_workspace(folder, trust_override=True)
    managed({"allowedMcpServers": [{"serverUrl": "not a url"}, {"serverName": "a"}]})
    ws = load_workspace(folder, trust_override=True)
    assert sorted(ws.mcp_servers) == ["a"]
    assert any("serverUrl must be a URL pattern" in n and "dropped" in n for n in ws.notices)
    assert not any("allowedMcpServers" in n and "does not use" in n for n in ws.notices)
