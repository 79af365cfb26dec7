"""Agent files: Claude Code's front matter, where they are read from, and workspace trust."""

from __future__ import annotations

from pathlib import Path

import pytest

from queryloop.agents import AgentCatalog, AgentSource, load_agents, parse_agent_text
from queryloop.config import trust_folder
from queryloop.config.project_config import project_config
from queryloop.errors import ConfigError

REVIEWER = """---
name: code-reviewer
description: Reviews a change for bugs. Use after editing code.
tools: Read, Grep, Glob, Agent(worker)
disallowedTools: [Bash]
model: haiku
permissionMode: plan
maxTurns: 8
color: blue
---
You are a careful reviewer.

Report each problem with its file and line.
"""


def test_front_matter_fields_are_read_like_claude_codes() -> None:
    d = parse_agent_text(REVIEWER, source=AgentSource.PROJECT)
    assert d.name == "code-reviewer"
    assert d.description.startswith("Reviews a change")
    assert d.tools == ("Read", "Grep", "Glob", "Agent")
    assert d.disallowed_tools == ("Bash",)
    assert (d.model, d.permission_mode, d.max_turns) == ("haiku", "plan", 8)
    assert d.prompt == "You are a careful reviewer.\n\nReport each problem with its file and line."
    assert d.extra == {}  # `color` is Claude Code's display colour: accepted, nothing to apply
    assert d.allows_tool("Grep") and not d.allows_tool("Bash") and not d.allows_tool("Write")
    assert d.allows_tool("Agent") and d.allows_tool("Task2", aliases=("Read",))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no front matter", "no YAML front matter"),
        ("---\nname: x\n---\nbody", "needs a description"),
        ("---\nname: x\n  : y\n---\n", "invalid YAML"),
        ("---\nname: x\ndescription: d\npermissionMode: yolo\n---\n", "not supported"),
        ("---\nname: x\ndescription: d\nmaxTurns: many\n---\n", "whole number"),
        ("---\nname: bad name\ndescription: d\n---\n", "not valid"),
    ],
)
def test_a_broken_file_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_agent_text(text, source=AgentSource.USER)


def write(folder: Path, name: str, description: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nPrompt of {name}.\n")
    return path


def test_project_agent_files_follow_workspace_trust(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    write(home / "agents", "helper", "user helper")
    write(project / ".queryloop" / "agents", "helper", "project helper")
    write(project / ".queryloop" / "agents", "deployer", "deploys")
    untrusted = load_agents(project, user_home=home, trusted=False)
    assert sorted(d.name for d in untrusted.definitions) == ["general-purpose", "helper"]
    assert untrusted.get("helper").description == "user helper"  # type: ignore[union-attr]
    assert untrusted.notices == ()  # counted in the folder's one notice instead
    assert project_config(project, home).agents == 2
    trust_folder(project, home)
    trusted = load_agents(project, user_home=home, trusted=True)
    assert trusted.get("helper").description == "project helper"  # type: ignore[union-attr]
    assert trusted.get("deployer") is not None and trusted.notices == ()


def test_a_broken_file_is_skipped_with_a_notice_and_the_rest_load(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / "agents", "good", "fine")
    (home / "agents" / "bad.md").write_text("---\nname: bad\n---\n")
    loaded = load_agents(tmp_path, user_home=home, trusted=True)
    assert loaded.get("good") is not None and loaded.get("bad") is None
    assert any("bad.md skipped" in n and "description" in n for n in loaded.notices)


def test_the_catalog_sees_files_added_and_removed_and_tells_a_notice_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    told: list[str] = []
    (home / "agents").mkdir(parents=True)
    (home / "agents" / "bad.md").write_text("---\nname: bad\n---\nno description")
    catalog = AgentCatalog(tmp_path, user_home=home, trusted=True, on_notice=told.append)
    assert list(catalog.current.listing) == ["general-purpose"]
    path = write(home / "agents", "late", "added later")
    catalog.refresh()
    assert "late" in catalog.current.listing
    path.unlink()
    catalog.refresh()
    assert "late" not in catalog.current.listing
    assert len(told) == 1 and "bad.md" in told[0]
