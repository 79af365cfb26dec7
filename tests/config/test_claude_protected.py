"""Every Claude Code file queryloop reads is a protected path (issue 22 with issue 18): a write
to one asks in acceptEdits mode, so one prompt injection cannot rewrite the rules, memory,
agents or skills the next session follows.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from queryloop.agent.assembly_guards import build_permission_context
from queryloop.agent.options import AgentOptions
from queryloop.config import load_workspace, settings_paths
from queryloop.permissions import PermissionChecker, PermissionMode
from queryloop.tools.base import ToolContext
from queryloop.tools.builtin import WriteTool


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    drop_ins = Path(os.environ["QUERYLOOP_CLAUDE_MANAGED_DIR"]) / "managed-settings.d"
    drop_ins.mkdir(parents=True)
    (drop_ins / "10-team.json").write_text("{}")
    return folder


def read_paths(project: Path, home: Path) -> list[Path]:
    claude = Path(os.environ["CLAUDE_CONFIG_DIR"])
    managed = Path(os.environ["QUERYLOOP_CLAUDE_MANAGED_DIR"])
    return [
        *(s.path for s in settings_paths(project, home)),
        project / "CLAUDE.md",
        project / "CLAUDE.local.md",
        project / ".claude" / "CLAUDE.md",
        project / "sub" / "CLAUDE.md",
        project / "sub" / "CLAUDE.local.md",
        project / "sub" / ".claude" / "CLAUDE.md",
        project / ".claude" / "agents" / "x.md",
        project / ".claude" / "skills" / "y" / "SKILL.md",
        project / ".claude" / "commands" / "z.md",
        claude / "CLAUDE.md",
        claude / "agents" / "x.md",
        claude / "skills" / "y" / "SKILL.md",
        claude / "commands" / "z.md",
        managed / "CLAUDE.md",
    ]


def test_every_claude_code_file_read_is_protected(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    options = AgentOptions.of(cwd=project, home=home)
    workspace = load_workspace(project, user_home=home)
    context = build_permission_context(options, workspace, home)
    protected = context.protected_for([project])
    unprotected = [p for p in read_paths(project, home) if protected.find(p) is None]
    assert unprotected == []


async def test_a_write_to_claude_config_dir_asks_in_accept_edits(
    project: Path, tmp_path: Path
) -> None:
    """The folder holding both Claude Code folders (in the tests) is a working folder here
    (an additional directory), where acceptEdits writes without asking: only their protection
    makes these writes ask."""
    home = tmp_path / "home"
    claude = Path(os.environ["CLAUDE_CONFIG_DIR"])
    managed = Path(os.environ["QUERYLOOP_CLAUDE_MANAGED_DIR"])
    assert claude.parent == managed.parent
    options = AgentOptions.of(cwd=project, home=home, permission_mode="acceptEdits")
    workspace = load_workspace(project, user_home=home)
    checker = PermissionChecker(build_permission_context(options, workspace, home))
    assert checker.context.mode is PermissionMode.ACCEPT_EDITS

    async def decide(target: Path) -> str:
        given = {"file_path": str(target), "content": "{}"}
        tool_context = ToolContext(cwd=project, additional_dirs=[claude.parent])
        return (await checker.evaluate(WriteTool(), given, tool_context)).behavior

    assert await decide(claude.parent / "notes.txt") == "allow"  # a working folder
    assert await decide(claude / "settings.json") == "ask"
    assert await decide(managed / "managed-settings.json") == "ask"
    assert await decide(managed / "managed-settings.d" / "20-x.json") == "ask"
    assert await decide(project / ".claude" / "settings.local.json") == "ask"
