"""Agents and skills in Claude Code's folders beside queryloop's: which count, under which
trust, and which wins when both layouts define the same name (docs/settings.md, "Two layouts").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from queryloop.agents.definitions import AgentSource, load_agents
from queryloop.config import FileScope, Layout, agent_files, config_folders
from queryloop.config.project_config import project_config
from queryloop.skills.loader import load_skills


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(project, queryloop home, Claude Code's user folder)."""
    project, home, claude = tmp_path / "proj", tmp_path / "home", tmp_path / "claude"
    for folder in (project, home, claude):
        folder.mkdir()
    return project, home, claude


def agent(folder: Path, name: str, description: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\nPrompt.\n"
    (folder / f"{name}.md").write_text(text)


def skill(folder: Path, name: str, description: str) -> None:
    (folder / name).mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {description}\n---\nDo it.\n"
    (folder / name / "SKILL.md").write_text(text)


def test_agents_from_both_layouts_project_over_user_queryloop_over_claude(
    dirs: tuple[Path, Path, Path],
) -> None:
    project, home, claude = dirs
    agent(claude / "agents", "shared", "claude user")
    agent(claude / "agents", "only-claude-user", "a")
    agent(home / "agents", "shared", "queryloop user")
    agent(project / ".claude" / "agents", "shared", "claude project")
    agent(project / ".claude" / "agents", "only-claude-project", "b")
    found = agent_files(project, user_home=home, trusted=True, claude_dir=claude)
    assert [(f.scope, f.layout) for f in found.files] == [
        (FileScope.USER, Layout.CLAUDE),
        (FileScope.USER, Layout.CLAUDE),
        (FileScope.USER, Layout.QUERYLOOP),
        (FileScope.PROJECT, Layout.CLAUDE),
        (FileScope.PROJECT, Layout.CLAUDE),
    ]
    by_name = {
        d.name: d
        for d in load_agents(project, user_home=home, trusted=True, claude_dir=claude).definitions
    }
    assert by_name["shared"].description == "claude project"
    assert by_name["only-claude-project"].source is AgentSource.PROJECT
    assert by_name["only-claude-user"].source is AgentSource.USER
    agent(project / ".queryloop" / "agents", "shared", "queryloop project")
    loaded = load_agents(project, user_home=home, trusted=True, claude_dir=claude)
    assert {d.name: d.description for d in loaded.definitions}["shared"] == "queryloop project"


def test_an_untrusted_projects_claude_agents_are_left_out_with_a_notice(
    dirs: tuple[Path, Path, Path],
) -> None:
    project, home, claude = dirs
    agent(project / ".claude" / "agents", "x", "from a stranger")
    found = agent_files(project, user_home=home, trusted=False, claude_dir=claude)
    assert found.files == ()
    assert found.notices == ()  # counted in the folder's one notice instead
    assert project_config(project, home).agents == 1


def test_skills_user_over_project_queryloop_over_claude(dirs: tuple[Path, Path, Path]) -> None:
    project, home, claude = dirs
    skill(project / ".claude" / "skills", "notes", "claude project")
    skill(project / ".claude" / "skills", "deploy", "claude project deploy")
    skill(project / ".queryloop" / "skills", "notes", "queryloop project")
    assert load_skills(project, home, trusted=True, claude=claude).listing() == {
        "deploy": "claude project deploy",
        "notes": "queryloop project",
    }
    skill(claude / "skills", "notes", "claude user")
    assert load_skills(project, home, trusted=True, claude=claude).listing()["notes"] == (
        "claude user"
    )
    skill(home / "skills", "notes", "queryloop user")
    skills = load_skills(project, home, trusted=True, claude=claude)
    assert skills.listing()["notes"] == "queryloop user"
    assert load_skills(project, home, trusted=False, claude=claude).listing() == {
        "notes": "queryloop user"
    }


def test_config_folders_for_any_kind(dirs: tuple[Path, Path, Path]) -> None:
    project, home, claude = dirs
    for folder in (claude / "commands", project / ".claude" / "commands"):
        folder.mkdir(parents=True)
    found = config_folders(project, "commands", user_home=home, trusted=True, claude_dir=claude)
    assert [(f.path, f.scope, f.layout) for f in found.folders] == [
        (claude / "commands", FileScope.USER, Layout.CLAUDE),
        (project / ".claude" / "commands", FileScope.PROJECT, Layout.CLAUDE),
    ]
    untrusted = config_folders(
        project, "commands", user_home=home, trusted=False, claude_dir=claude
    )
    assert [f.path for f in untrusted.folders] == [claude / "commands"]
    assert [f.path for f in untrusted.untrusted] == [project / ".claude" / "commands"]
