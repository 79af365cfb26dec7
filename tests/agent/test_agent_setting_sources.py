"""`Agent(setting_sources=...)`: which of the user's and the project's files a session
reads (Claude Code's `--setting-sources`, the Claude Agent SDK's `setting_sources`):
settings files, memory files (at start and in subfolders), agent files and commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_helpers import FAST_RETRY

from queryloop import Agent
from queryloop.errors import ConfigError
from queryloop.testing import MessagesServer, text, tool_use, turn

MODELS = {"user": "claude-haiku-5-5", "project": "claude-opus-5-5", "local": "claude-sonnet-4-6"}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("QUERYLOOP_HOME", str(home))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.delenv("QUERYLOOP_MODEL", raising=False)
    return home


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    """A trusted project with settings, memory, an agent and a command at every scope."""
    project = tmp_path / "project"
    (project / ".queryloop" / "agents").mkdir(parents=True)
    (project / ".queryloop" / "commands").mkdir()
    (project / "sub").mkdir()
    (home / "agents").mkdir()
    (home / "commands").mkdir()
    files = {
        home / "settings.json": {"model": MODELS["user"], "trustedFolders": [str(project)]},
        project / ".queryloop" / "settings.json": {"model": MODELS["project"]},
        project / ".queryloop" / "settings.local.json": {"model": MODELS["local"]},
    }
    for path, data in files.items():
        path.write_text(json.dumps(data))
    (home / "QUERYLOOP.md").write_text("USER MEMORY: answer in French.\n")
    (project / "QUERYLOOP.md").write_text("PROJECT MEMORY: tabs, not spaces.\n")
    (project / "sub" / "QUERYLOOP.md").write_text("SUBFOLDER MEMORY: generated code.\n")
    (project / "sub" / "gen.py").write_text("x = 1\n")
    agent_file = "---\nname: {0}\ndescription: the {0} agent\n---\nYou are {0}.\n"
    (home / "agents" / "user-helper.md").write_text(agent_file.format("user-helper"))
    (project / ".queryloop" / "agents" / "project-helper.md").write_text(
        agent_file.format("project-helper")
    )
    (home / "commands" / "usercmd.md").write_text("Say hello.\n")
    (project / ".queryloop" / "commands" / "projcmd.md").write_text("Say bye.\n")
    return project


async def first_request(project: Path, sources: Any) -> dict[str, Any]:
    script = [turn(tool_use("Read", {"file_path": "sub/gen.py"})), turn(text("ok"))]
    with MessagesServer(script) as server:
        # no model named: the settings' model decides
        agent = Agent(base_url=server.base_url, retry=FAST_RETRY, cwd=project,
                      setting_sources=sources)  # fmt: skip
        try:
            await agent.run("hi")
            commands = sorted(agent.slash_commands)
        finally:
            await agent.aclose()
        first, second = server.requests
    return {"first": first, "second": second, "commands": commands}


@pytest.mark.parametrize(
    ("sources", "model"),
    [
        (None, MODELS["local"]),
        (["user", "project", "local"], MODELS["local"]),
        (["user", "project"], MODELS["project"]),
        (["user"], MODELS["user"]),
        (["project"], MODELS["project"]),
        ([], "claude-sonnet-5-5"),  # no file read: the default model
    ],
)
async def test_only_the_chosen_settings_files_are_read(
    project: Path, sources: Any, model: str
) -> None:
    seen = await first_request(project, sources)
    assert seen["first"]["model"] == model


async def test_memory_agents_and_commands_follow_the_sources(project: Path) -> None:
    everything = await first_request(project, None)
    user_only = await first_request(project, ["user"])
    project_only = await first_request(project, ["project"])

    def memory(seen: dict[str, Any]) -> set[str]:
        sent = json.dumps(seen["second"]["messages"])
        return {m for m in ("USER", "PROJECT", "SUBFOLDER") if f"{m} MEMORY" in sent}

    def agents(seen: dict[str, Any]) -> set[str]:
        sent = json.dumps(seen["first"])
        return {a for a in ("user-helper", "project-helper") if a in sent}

    assert memory(everything) == {"USER", "PROJECT", "SUBFOLDER"}
    assert memory(user_only) == {"USER"}
    assert memory(project_only) == {"PROJECT", "SUBFOLDER"}
    assert agents(everything) == {"user-helper", "project-helper"}
    assert agents(user_only) == {"user-helper"}
    assert agents(project_only) == {"project-helper"}
    assert {"usercmd", "projcmd"} <= set(everything["commands"])
    assert "usercmd" in user_only["commands"] and "projcmd" not in user_only["commands"]
    assert "projcmd" in project_only["commands"] and "usercmd" not in project_only["commands"]


async def test_an_unknown_source_is_refused(tmp_path: Path) -> None:
    with MessagesServer([]) as server, pytest.raises(ConfigError, match="setting_sources"):
        Agent(base_url=server.base_url, cwd=tmp_path, setting_sources=["global"])
