"""`Read(./.env)` holds for every built-in tool and every spelling of the path, through the real
executor: Read is denied, Grep/Glob/LS leave the file out of their results, Bash asks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from perm_fixtures import run_tool

from queryloop.messages.blocks import ToolResultBlock, ToolUseBlock
from queryloop.permissions import (
    PermissionChecker,
    PermissionContext,
    PermissionMode,
    ReadDenials,
    RuleSet,
)
from queryloop.tools.base import Tool, ToolContext
from queryloop.tools.builtin import BashTool, GlobTool, GrepTool, LSTool, ReadTool

SECRET = "SECRET=hunter2"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "sub").mkdir(parents=True)
    (root / ".env").write_text(SECRET + "\n")
    (root / "prod.key").write_text(SECRET + "\n")
    (root / "app.py").write_text("print('SECRET=not-a-secret')\n")
    os.symlink(root / ".env", root / "innocent.txt")
    return root


async def call(tool: Tool, project: Path, rules: list[str], **input: Any) -> ToolResultBlock:
    context = PermissionContext(
        mode=PermissionMode.BYPASS,
        rules=RuleSet.from_strings(deny=rules),
        home=project.parent / "home",
    )
    checker = PermissionChecker(context)
    block = ToolUseBlock(id="toolu_1", name=tool.name, input=input)
    ctx = ToolContext(cwd=project, hidden_paths=ReadDenials(context))
    return await run_tool(block, tool, ctx, checker)


@pytest.mark.parametrize(
    "spelling", ["./.env", ".env", "{root}/.env", "sub/../.env", "innocent.txt", "./sub/../.env"]
)
async def test_read_is_denied_for_every_spelling(project: Path, spelling: str) -> None:
    result = await call(
        ReadTool(), project, ["Read(./.env)"], file_path=spelling.format(root=project)
    )
    assert result.is_error and "Read(./.env)" in str(result.content)
    assert "hunter2" not in str(result.content)


@pytest.mark.parametrize("mode", ["content", "files_with_matches", "count"])
async def test_grep_leaves_denied_files_out(project: Path, mode: str) -> None:
    result = await call(
        GrepTool(use_ripgrep=False), project, ["Read(./.env)", "Read(*.key)"],
        pattern="SECRET", path=".", output_mode=mode,
    )  # fmt: skip
    text = str(result.content)
    assert not result.is_error and "app.py" in text
    assert "hunter2" not in text and ".env" not in text and "prod.key" not in text
    # the symlink to .env is hidden too (its resolved path is the denied file)
    assert "innocent.txt" not in text


async def test_grep_without_deny_rules_still_finds_everything(project: Path) -> None:
    result = await call(
        GrepTool(use_ripgrep=False), project, [], pattern="hunter2", path=".",
        output_mode="files_with_matches",
    )  # fmt: skip
    assert ".env" in str(result.content) and "prod.key" in str(result.content)


async def test_glob_and_ls_do_not_list_denied_files(project: Path) -> None:
    rules = ["Read(./.env)", "Read(*.key)"]
    globbed = str((await call(GlobTool(), project, rules, pattern="**/*")).content)
    assert "app.py" in globbed and ".env" not in globbed and "prod.key" not in globbed
    listed = str((await call(LSTool(), project, rules, path=".")).content)
    assert "app.py" in listed and "prod.key" not in listed


@pytest.mark.parametrize(
    "command", ["cat .env", "grep . .env", "cat innocent.txt", "cat sub/../.env", "cat prod.key"]
)
async def test_bash_naming_a_denied_file_is_not_run(project: Path, command: str) -> None:
    result = await call(BashTool(), project, ["Read(./.env)", "Read(*.key)"], command=command)
    assert result.is_error and "hunter2" not in str(result.content)
    assert "protects" in str(result.content)
