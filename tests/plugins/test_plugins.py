"""Plugins in Claude Code's layout: our own test plugin (tests/plugins/fixtures/qa-kit, one of
each part) through the real `queryloop` command against the local server — its command,
skill, agent, hook, MCP server and bin/ script all at work in one print-mode run — and which
plugins load from `enabledPlugins` under workspace trust."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from queryloop import Agent
from queryloop.config import SettingsError, load_workspace
from queryloop.providers.retry import RetryPolicy
from queryloop.testing import MessagesServer, text, tool_use, turn

sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
from cli_helpers import project, run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "qa-kit"
MCP_SERVERS = Path(__file__).parents[1] / "mcp" / "servers"


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the test plugin, and the variables its `.mcp.json` names."""
    monkeypatch.setenv("QL_TEST_PYTHON", sys.executable)
    monkeypatch.setenv("QL_TEST_MCP_SERVERS", str(MCP_SERVERS))
    copy = tmp_path / "plugins" / "qa-kit"
    shutil.copytree(FIXTURE, copy)
    return copy


def sent(body: dict[str, Any]) -> str:
    return json.dumps(body)


def test_a_plugin_dir_contributes_all_its_parts(tmp_path: Path, plugin: Path) -> None:
    agent_call = {"subagent_type": "qa-kit:inspector", "description": "inspect",
                  "prompt": "INSPECT-NOW"}  # fmt: skip
    script = [
        turn(tool_use("Bash", {"command": "qa-stamp from-model"})),
        turn(tool_use("mcp__plugin_qa-kit_echo__echo", {"text": "plugged", "times": 2})),
        turn(tool_use("Agent", agent_call)),
        turn(text("INSPECTOR-ANSWER: all clear")),  # the subagent's only turn
        turn(tool_use("Skill", {"skill": "qa-kit:triage"})),
        turn(text("Stamped, echoed, inspected, triaged.")),
    ]
    with MessagesServer(script) as server:
        done = run_cli(
            server.base_url, tmp_path, "--plugin-dir", str(plugin), "-p",
            "/qa-kit:stamp alpha beta", "--output-format", "json",
        )  # fmt: skip
        bodies = server.requests
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "Stamped, echoed, inspected, triaged."
    assert result["permission_denials"] == []
    first = sent(bodies[0])
    # The command: namespaced, expanded, its `!` line run by the plugin's bin/ script (its
    # allowed-tools grant it), ${CLAUDE_PLUGIN_ROOT} substituted.
    assert f"STAMP-COMMAND from {plugin}: stamp alpha beta." in first
    assert "Before you start: qa-stamped: early" in first
    # Announced: the plugin's skill, commands and agent by their namespaced names; the agents
    # folder the manifest's `agents` path replaces is not read.
    for name in ("qa-kit:triage", "qa-kit:stamp", "qa-kit:review:deep", "qa-kit:inspector"):
        assert name in first
    assert "ignored" not in first.replace("qa-kit", "")
    assert any(t["name"] == "mcp__plugin_qa-kit_echo__echo" for t in bodies[0]["tools"])
    # bin/ is on the Bash tool's PATH; the MCP server answers; the agent runs its prompt.
    assert "qa-stamped: from-model" in sent(bodies[1])
    assert "plugged plugged" in sent(bodies[2])
    assert f"INSPECTOR-PROMPT: you inspect files for the qa-kit plugin at {plugin}" in sent(
        bodies[3]
    )
    assert "INSPECTOR-ANSWER: all clear" in sent(bodies[4])
    data = tmp_path / "home" / "plugins" / "data" / "qa-kit-inline"
    assert f"TRIAGE-SKILL-BODY: the checklist is in {plugin}/skills/triage/checklist.md; " \
           f"notes go to {data}" in sent(bodies[5])  # fmt: skip
    # The hook fired for each Bash call, with the plugin's variables in its environment.
    log = (data / "bash-calls.log").read_text().splitlines()
    assert [json.loads(line.split("input=", 1)[1])["tool_input"]["command"] for line in log] == [
        "qa-stamp early",
        "qa-stamp from-model",
    ]
    assert all(line.startswith(f"root={plugin} data={data} ") for line in log)


def test_enabled_plugins_load_from_the_install_cache_under_trust(
    tmp_path: Path, plugin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude, home, proj = tmp_path / "claude", tmp_path / "home", tmp_path / "proj"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    proj.mkdir()
    (claude / "plugins").mkdir(parents=True)
    installed = {"version": 2, "plugins": {"qa-kit@qa-market": [
        {"scope": "user", "installPath": str(plugin), "version": "0.3.0",
         "lastUpdated": "2026-01-01T00:00:00Z"}]}}  # fmt: skip
    (claude / "plugins" / "installed_plugins.json").write_text(json.dumps(installed))
    settings = {"enabledPlugins": {"qa-kit@qa-market": True, "gone@far-market": True}}
    (proj / ".queryloop").mkdir()
    (proj / ".queryloop" / "settings.json").write_text(json.dumps(settings))

    untrusted = load_workspace(proj, user_home=home, trust_override=False)
    trusted = load_workspace(proj, user_home=home, trust_override=True)
    assert untrusted.plugins.plugins == ()  # a stranger's settings enable nothing
    assert any("enabledPlugins qa-kit@qa-market" in n for n in untrusted.settings.ignored)
    assert any("not trusted" in n and "enabledPlugins" in n for n in untrusted.notices)
    loaded = trusted.plugins.plugins
    assert [(p.id, p.root) for p in loaded] == [("qa-kit@qa-market", plugin)]
    assert "plugin_qa-kit_echo" in trusted.mcp_servers
    assert trusted.settings.hooks.count() == 1
    gone = [n for n in trusted.notices if "gone@far-market" in n]
    assert len(gone) == 1 and "far-market" in gone[0] and "not installed" in gone[0]


def test_a_broken_plugin_stops_the_run_and_an_escaping_path_is_skipped(
    tmp_path: Path, plugin: Path
) -> None:
    manifest = plugin / ".claude-plugin" / "plugin.json"
    manifest.write_text('{"name": "qa-kit",\n "commands": ["./commands", "../../outside"]}')
    found = load_workspace(project(tmp_path), user_home=tmp_path / "home",
                           plugin_dirs=[plugin])  # fmt: skip
    assert any("'../../outside' escapes the plugin directory" in n for n in found.notices)
    assert found.plugins.plugins[0].commands == (plugin / "commands",)
    manifest.write_text('{"name": "qa-kit",\n  "version": }')
    with pytest.raises(SettingsError, match=r"plugin\.json:2:14: invalid JSON"):
        load_workspace(project(tmp_path), user_home=tmp_path / "home", plugin_dirs=[plugin])
    with MessagesServer([]) as server:
        done = run_cli(server.base_url, tmp_path, "--plugin-dir", str(plugin), "-p", "hi")
    assert done.returncode == 2 and "plugin.json:2:14" in done.stderr


async def test_plugin_skill_grant_and_sdk_option(tmp_path: Path, plugin: Path) -> None:
    """`Agent(plugin_dirs=[...])`: a plugin command's allowed-tools name its own MCP server,
    whose tools otherwise ask (headless: refused)."""
    script = [
        turn(tool_use("mcp__plugin_qa-kit_echo__echo", {"text": "first"})),
        turn(text("one")),
        turn(tool_use("mcp__plugin_qa-kit_echo__echo", {"text": "second"})),
        turn(text("two")),
    ]
    with MessagesServer(script) as server:
        agent = Agent(
            "claude-sonnet-5-5", base_url=server.base_url, cwd=project(tmp_path),
            home=tmp_path / "home", plugin_dirs=[plugin],
            retry=RetryPolicy(max_retries=0, base_delay=0.01),
        )  # fmt: skip
        granted = await agent.run("/qa-kit:stamp x")
        plain = await agent.run("echo again")
        await agent.aclose()
    assert not granted.denials and "first" in sent(server.requests[1])
    assert [d.tool_name for d in plain.denials] == ["mcp__plugin_qa-kit_echo__echo"]
