"""Claude Code's environment variables in the settings' `env` (or the environment) take
effect as in Claude Code: `MAX_THINKING_TOKENS` (the thinking budget; 0 turns thinking off),
`BASH_DEFAULT_TIMEOUT_MS` and `BASH_MAX_TIMEOUT_MS` (the Bash tool's default and longest
timeout) — the whole Agent over the local server, real settings files and real commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_support import agent_on
from file_support import write_json
from queryloop.testing import MessagesServer, text, tool_use, turn


def settings_env(project: Path, env: dict[str, str]) -> None:
    write_json(project / ".claude" / "settings.json", {"env": env})


def tool_result_texts(body: dict[str, object]) -> list[str]:
    messages = body["messages"]
    assert isinstance(messages, list)
    return [
        str(block.get("content"))
        for message in messages
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


async def test_settings_env_sets_the_thinking_budget_and_the_bash_timeouts(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "proj"
    settings_env(
        project,
        {"MAX_THINKING_TOKENS": "3000", "BASH_DEFAULT_TIMEOUT_MS": "700",
         "BASH_MAX_TIMEOUT_MS": "900"},
    )  # fmt: skip
    script = [
        turn(tool_use("Bash", {"command": "sleep 3"})),
        turn(tool_use("Bash", {"command": "echo never", "timeout": 600_000})),
        turn(text("done")),
    ]
    with MessagesServer(script) as server:
        agent = agent_on(server, project, home, trust=True, permission_mode="bypassPermissions")
        await agent.run("wait")
        await agent.aclose()
    first = server.requests[0]
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 3000}
    assert first["max_tokens"] > 3000
    results = tool_result_texts(server.requests[-1])
    assert "timed out after 700 ms" in results[0]  # BASH_DEFAULT_TIMEOUT_MS
    assert "`timeout` must be at most 900 ms" in results[1]  # BASH_MAX_TIMEOUT_MS


async def test_no_thinking_a_longer_maximum_and_a_bad_value_is_told(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "proj"
    monkeypatch.setenv("MAX_THINKING_TOKENS", "0")
    settings_env(project, {"BASH_DEFAULT_TIMEOUT_MS": "soon", "BASH_MAX_TIMEOUT_MS": "1200000"})
    script = [
        turn(tool_use("Bash", {"command": "echo hi", "timeout": 700_000})),
        turn(text("done")),
    ]
    with MessagesServer(script) as server:
        agent = agent_on(server, project, home, trust=True, permission_mode="bypassPermissions")
        await agent.run("go")
        await agent.aclose()
    assert server.requests[0]["thinking"] == {"type": "disabled"}
    (result,) = tool_result_texts(server.requests[-1])
    assert "hi" in result and "BASH_DEFAULT_TIMEOUT_MS='soon' is not a number" in result
