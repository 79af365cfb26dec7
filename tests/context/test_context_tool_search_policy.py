"""Tool search only when it pays: small MCP tool sets go in `tools`, large ones are deferred.

End to end through the Agent with real stdio MCP servers (tests/mcp/servers) and the official
SDK against the local Messages API server; the request count is what the server received.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from queryloop import Agent
from queryloop.context.tool_search import (
    ToolSearchMode,
    ToolSearchPolicy,
    definition_tokens,
    parse_tool_search,
)
from queryloop.errors import ConfigError
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer, text, tool_use, turn

SERVERS = Path(__file__).parents[1] / "mcp" / "servers"
ECHO = "mcp__echo__echo"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("QUERYLOOP_HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return home


def _mcp_config(tmp_path: Path, name: str, script: str, *args: str) -> Path:
    config = tmp_path / f"{name}.mcp.json"
    server = {"command": sys.executable, "args": [str(SERVERS / script), *args]}
    config.write_text(json.dumps({"mcpServers": {name: server}}))
    return config


def _agent(server: MessagesServer, tmp_path: Path, home: Path, config: Path, **kw: Any) -> Agent:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return Agent(
        "claude-sonnet-4-6",
        base_url=server.base_url,
        retry=RetryPolicy(max_retries=1, base_delay=0.01),
        cwd=project,
        home=home,
        mcp_config=config,
        permission_mode="bypassPermissions",
        **kw,
    )


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [t["name"] for t in body.get("tools") or []]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ToolSearchPolicy()),
        ("auto", ToolSearchPolicy()),
        ("auto:5", ToolSearchPolicy(percent=5.0)),
        ("always", ToolSearchPolicy(ToolSearchMode.ALWAYS)),
        ("true", ToolSearchPolicy(ToolSearchMode.ALWAYS)),
        ("never", ToolSearchPolicy(ToolSearchMode.NEVER)),
        ("false", ToolSearchPolicy(ToolSearchMode.NEVER)),
        (20_000, ToolSearchPolicy(threshold_tokens=20_000)),
        ("1500", ToolSearchPolicy(threshold_tokens=1500)),
    ],
)
def test_setting_values(value: str | int | None, expected: ToolSearchPolicy) -> None:
    assert parse_tool_search(value) == expected


@pytest.mark.parametrize("value", ["sometimes", "auto:x", "auto:150", -3])
def test_bad_setting_values_name_the_accepted_ones(value: str | int) -> None:
    with pytest.raises(ConfigError, match=r"auto|token count"):
        parse_tool_search(value)


def test_default_threshold_is_ten_percent_of_the_window() -> None:
    assert ToolSearchPolicy().threshold(200_000) == 20_000
    assert ToolSearchPolicy(percent=5).threshold(1_000_000) == 50_000
    assert ToolSearchPolicy(threshold_tokens=123).threshold(200_000) == 123


async def test_small_mcp_set_goes_in_tools_and_saves_the_tool_search_request(
    tmp_path: Path, home: Path
) -> None:
    """Two-step session with echo's six small tools: before (always deferred) the model first
    has to load echo with ToolSearch; after (auto) echo is in `tools` from the first request."""
    config = _mcp_config(tmp_path, "echo", "echo_server.py")
    before_script = [
        turn(tool_use("ToolSearch", {"query": f"select:{ECHO}", "max_results": 5})),
        turn(tool_use(ECHO, {"text": "hi"})),
        turn(text("Echoed.")),
    ]
    with MessagesServer(before_script) as server:
        agent = _agent(server, tmp_path, home, config, tool_search="always")
        before = await agent.run("echo hi")
        await agent.aclose()
        before_requests = list(server.requests)
    assert before.text == "Echoed." and len(before_requests) == 3
    assert "ToolSearch" in _tool_names(before_requests[0])
    assert ECHO not in _tool_names(before_requests[0])

    with MessagesServer([turn(tool_use(ECHO, {"text": "hi"})), turn(text("Echoed."))]) as server:
        agent = _agent(server, tmp_path, home, config)
        after = await agent.run("echo hi")
        await agent.aclose()
        after_requests = list(server.requests)
        violations = [v for v in server.violations if v]
    assert after.text == "Echoed." and len(after_requests) == 2
    names = _tool_names(after_requests[0])
    assert ECHO in names and "ToolSearch" not in names
    assert _tool_names(after_requests[1]) == names  # the tools array never moves
    last = after_requests[1]["messages"][-1]["content"]
    assert any(b.get("type") == "tool_result" and "hi" in json.dumps(b) for b in last)
    assert "deferred tools" not in json.dumps(after_requests[0]["messages"])
    assert violations == []
    assert after.cost_usd < before.cost_usd


@pytest.mark.slow
async def test_a_large_mcp_set_is_still_deferred(tmp_path: Path, home: Path) -> None:
    config = _mcp_config(tmp_path, "big", "lookup_server.py", "--many", "200")
    with MessagesServer([turn(text("ok"))]) as server:
        agent = _agent(server, tmp_path, home, config, context_window=200_000)
        await agent.run("hello")
        deferred = agent._runtime.deferred_tools if agent._runtime else ()
        await agent.aclose()
        body = server.requests[0]
    assert len(deferred) == 203
    assert definition_tokens(deferred) > 20_000  # above 10% of a 200k window
    names = _tool_names(body)
    assert "ToolSearch" in names and not any(n.startswith("mcp__") for n in names)
    assert "mcp__big__tool_199" in json.dumps(body["messages"])  # announced by name only


@pytest.mark.slow
async def test_threshold_from_settings_and_from_the_agent(tmp_path: Path, home: Path) -> None:
    config = _mcp_config(tmp_path, "echo", "echo_server.py")
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"toolSearch": 100}))
    with MessagesServer([turn(text("a")), turn(text("b"))]) as server:
        from_settings = _agent(server, tmp_path, home, config)
        await from_settings.run("hello")
        await from_settings.aclose()
        from_agent = _agent(server, tmp_path, home, config, tool_search="never")
        await from_agent.run("hello")
        await from_agent.aclose()
        first, second = server.requests
    assert "ToolSearch" in _tool_names(first)  # echo's tools are above 100 tokens
    assert ECHO in _tool_names(second) and "ToolSearch" not in _tool_names(second)


def test_a_bad_settings_value_is_reported_not_fatal(tmp_path: Path) -> None:
    from queryloop.config import load_settings

    (tmp_path / "settings.json").write_text(json.dumps({"toolSearch": "sometimes"}))
    settings = load_settings(tmp_path / "project", user_home=tmp_path, trusted=True)
    assert settings.tool_search is None
    assert any("toolSearch" in str(p) for p in settings.problems)
