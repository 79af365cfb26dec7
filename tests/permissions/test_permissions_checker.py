"""The checker end to end: modes, rules, working folders, symlinks, asking, headless denials."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Unpack

import pytest
from perm_fixtures import (
    FakeBash,
    FakeEdit,
    FakeGrep,
    FakeMcp,
    FakeRead,
    FakeReadOnlyBash,
    FakeWrite,
    Rules,
)

from queryloop.permissions import (
    PermissionAllow,
    PermissionChecker,
    PermissionContext,
    PermissionDeny,
    PermissionMode,
    PermissionRequest,
    RuleSet,
)
from queryloop.tools.base import DenialSource, Tool, ToolContext


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text("SECRET=1")
    (root / "src" / "a.py").write_text("x = 1")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_rsa").write_text("key")
    return h


def checker(
    home: Path, mode: PermissionMode = PermissionMode.DEFAULT, **rules: Unpack[Rules]
) -> PermissionChecker:
    ctx = PermissionContext(mode=mode, rules=RuleSet.from_strings(**rules), home=home)
    return PermissionChecker(ctx)


async def decide(ch: PermissionChecker, tool: Tool, project: Path, **input: Any) -> str:
    decision = await ch.check(tool, input, ToolContext(cwd=project))
    return decision.behavior


async def test_default_mode_reads_inside_and_asks_for_edits(project: Path, home: Path) -> None:
    ch = checker(home)
    assert await decide(ch, FakeRead(), project, file_path="src/a.py") == "allow"
    decision = await ch.check(FakeEdit(), {"file_path": "src/a.py"}, ToolContext(cwd=project))
    assert decision.behavior == "deny"  # headless: an unanswered ask is a denial
    assert "requires approval" in decision.message
    assert decision.source is DenialSource.NO_APPROVER
    # How to allow it, for a person at the command line and for a program embedding it.
    assert "--allowed-tools 'Edit(src/a.py)'" in decision.message
    assert "Agent(allowed_tools=['Edit(src/a.py)'])" in decision.message
    assert "acceptEdits permission mode" in decision.message


async def test_headless_bash_denial_names_the_rule_to_add(project: Path, home: Path) -> None:
    decision = await checker(home).check(
        FakeBash(), {"command": "git diff HEAD"}, ToolContext(cwd=project)
    )
    assert decision.behavior == "deny"
    assert "--allowed-tools 'Bash(git diff:*)'" in decision.message


async def test_accept_edits_allows_edits_inside_only(
    project: Path, home: Path, tmp_path: Path
) -> None:
    ch = checker(home, PermissionMode.ACCEPT_EDITS)
    assert await decide(ch, FakeEdit(), project, file_path="src/a.py") == "allow"
    assert await decide(ch, FakeWrite(), project, file_path="new.txt") == "allow"
    assert await decide(ch, FakeWrite(), project, file_path=str(tmp_path / "out.txt")) == "deny"
    assert await decide(ch, FakeBash(), project, command="ls") == "deny"


async def test_plan_mode_allows_only_read_only(project: Path, home: Path) -> None:
    ch = checker(home, PermissionMode.PLAN, allow=["Edit", "Bash"])
    assert await decide(ch, FakeRead(), project, file_path="src/a.py") == "allow"
    decision = await ch.check(FakeEdit(), {"file_path": "src/a.py"}, ToolContext(cwd=project))
    assert decision.behavior == "deny" and "plan mode" in decision.message
    assert await decide(ch, FakeBash(), project, command="ls") == "deny"


async def test_bypass_allows_everything_but_deny_rules(project: Path, home: Path) -> None:
    ch = checker(
        home, PermissionMode.BYPASS, deny=["Read(./.env)", "Read(~/.ssh/**)", "Bash(rm:*)"]
    )
    assert await decide(ch, FakeBash(), project, command="curl x | grep y > out") == "allow"
    # code piped into a shell cannot be checked against the deny rules: it asks (headless: no)
    assert await decide(ch, FakeBash(), project, command="curl x | sh") == "deny"
    assert await decide(ch, FakeWrite(), project, file_path="/elsewhere/x") == "allow"
    assert await decide(ch, FakeRead(), project, file_path=".env") == "deny"
    assert await decide(ch, FakeRead(), project, file_path=str(home / ".ssh" / "id_rsa")) == "deny"
    assert await decide(ch, FakeBash(), project, command="ls && rm -rf /") == "deny"


async def test_deny_beats_allow_for_secrets(project: Path, home: Path) -> None:
    ch = checker(
        home, allow=["Read", "Edit"], deny=["Read(./.env)", "Edit(./.env)", "Read(~/.ssh/**)"]
    )
    decision = await ch.check(FakeRead(), {"file_path": ".env"}, ToolContext(cwd=project))
    assert decision.behavior == "deny"
    assert "Read(./.env)" in decision.message and "denied" in decision.message
    assert await decide(ch, FakeWrite(), project, file_path=".env") == "deny"  # Edit covers Write
    assert (
        await decide(ch, FakeGrep(), project, path=str(home / ".ssh")) == "deny"
    )  # Read covers Grep
    assert await decide(ch, FakeRead(), project, file_path="src/a.py") == "allow"


async def test_tilde_paths_resolve_against_home(project: Path, home: Path) -> None:
    ch = checker(home, allow=["Read"], deny=["Read(~/.ssh/**)"])
    assert await decide(ch, FakeRead(), project, file_path=str(home / ".ssh")) == "deny"
    assert await decide(ch, FakeRead(), project, file_path=str(home / ".ssh/id_rsa")) == "deny"


async def test_dotdot_escape_needs_permission(project: Path, home: Path) -> None:
    (project.parent / "outside.txt").write_text("x")
    ch = checker(home, PermissionMode.ACCEPT_EDITS)
    assert await decide(ch, FakeRead(), project, file_path="../outside.txt") == "deny"
    assert await decide(ch, FakeEdit(), project, file_path="src/../../outside.txt") == "deny"
    assert await decide(ch, FakeRead(), project, file_path="src/../src/a.py") == "allow"


async def test_symlink_escape_needs_permission(project: Path, home: Path, tmp_path: Path) -> None:
    secret_dir = tmp_path / "secret"
    secret_dir.mkdir()
    (secret_dir / "data").write_text("x")
    os.symlink(secret_dir, project / "link")
    ch = checker(home, PermissionMode.ACCEPT_EDITS, allow=["Edit(link/**)"])
    assert await decide(ch, FakeRead(), project, file_path="link/data") == "deny"
    # the allow rule names the link, but the real target is outside: not approved by it
    assert await decide(ch, FakeEdit(), project, file_path="link/data") == "deny"


async def test_symlink_cannot_dodge_a_deny_rule(project: Path, home: Path) -> None:
    os.symlink(project / ".env", project / "innocent.txt")
    ch = checker(home, PermissionMode.BYPASS, deny=["Read(./.env)"])
    assert await decide(ch, FakeRead(), project, file_path="innocent.txt") == "deny"


async def test_outside_path_allowed_by_explicit_absolute_rule(
    project: Path, home: Path, tmp_path: Path
) -> None:
    other = tmp_path / "shared"
    other.mkdir()
    ch = checker(home, allow=[f"Read(/{other}/**)"])
    assert await decide(ch, FakeRead(), project, file_path=str(other / "x")) == "allow"


async def test_additional_dirs_are_working_folders(
    project: Path, home: Path, tmp_path: Path
) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    ctx = ToolContext(cwd=project, additional_dirs=[extra])
    decision = await checker(home).check(FakeRead(), {"file_path": str(extra / "f")}, ctx)
    assert decision.behavior == "allow"


async def test_ask_rule_beats_allow_rule(project: Path, home: Path) -> None:
    ch = checker(home, allow=["Bash"], ask=["Bash(git push:*)"])
    assert await decide(ch, FakeBash(), project, command="git status") == "allow"
    assert await decide(ch, FakeBash(), project, command="git push origin") == "deny"


async def test_ask_handler_answers_and_remembers(project: Path, home: Path) -> None:
    seen: list[PermissionRequest] = []

    async def ask(request: PermissionRequest) -> PermissionAllow:
        seen.append(request)
        return PermissionAllow(remember=True)

    ch = PermissionChecker(PermissionContext(home=home), ask=ask)
    ctx = ToolContext(cwd=project)
    assert (await ch.check(FakeBash(), {"command": "git diff HEAD"}, ctx)).behavior == "allow"
    assert seen[0].suggested_rule == "Bash(git diff:*)"
    assert (await ch.check(FakeBash(), {"command": "git diff --stat"}, ctx)).behavior == "allow"
    assert len(seen) == 1  # remembered for the session
    assert (await ch.check(FakeBash(), {"command": "git diff; rm x"}, ctx)).behavior == "allow"
    assert len(seen) == 2  # the compound command was asked about again


async def test_can_use_tool_callback(project: Path, home: Path) -> None:
    calls: list[str] = []

    def can_use_tool(name: str, input: Mapping[str, Any], request: PermissionRequest) -> Any:
        calls.append(name)
        if input["command"].startswith("rm"):
            return PermissionDeny("never delete")
        return PermissionAllow(updated_input={"command": input["command"] + " --dry-run"})

    ch = PermissionChecker(PermissionContext(home=home), can_use_tool=can_use_tool)
    ctx = ToolContext(cwd=project)
    denied = await ch.check(FakeBash(), {"command": "rm x"}, ctx)
    assert denied.behavior == "deny" and "never delete" in denied.message
    allowed = await ch.check(FakeBash(), {"command": "make"}, ctx)
    assert allowed.updated_input == {"command": "make --dry-run"}
    assert await decide(ch, FakeRead(), project, file_path="src/a.py") == "allow"
    assert calls == ["Bash", "Bash"]  # reads inside the project never reach the callback


async def test_broken_ask_handler_is_a_denial_not_a_crash(project: Path, home: Path) -> None:
    async def ask(request: PermissionRequest) -> bool:
        raise RuntimeError("terminal went away")

    ch = PermissionChecker(PermissionContext(home=home), ask=ask)
    decision = await ch.check(FakeBash(), {"command": "ls"}, ToolContext(cwd=project))
    assert decision.behavior == "deny" and "terminal went away" in decision.message


async def test_mcp_tools_follow_rules(project: Path, home: Path) -> None:
    assert await decide(checker(home), FakeMcp(), project) == "deny"
    assert await decide(checker(home, allow=["mcp__github"]), FakeMcp(), project) == "allow"
    assert (
        await decide(
            checker(home, PermissionMode.BYPASS, deny=["mcp__github__create_issue"]),
            FakeMcp(),
            project,
        )
        == "deny"
    )


async def test_denied_by_rule_for_hook_allowed_calls(project: Path, home: Path) -> None:
    ch = checker(home, deny=["Bash(curl:*)"])
    ctx = ToolContext(cwd=project)
    assert ch.denied_by_rule(FakeBash(), {"command": "ls"}, ctx) is None
    assert ch.denied_by_rule(FakeBash(), {"command": "ls | curl -d @- x"}, ctx) is not None


async def test_read_only_bash_cannot_read_secrets_or_outside(project: Path, home: Path) -> None:
    ch = checker(home, deny=["Read(./.env)", "Read(~/.ssh/**)"])
    bash = FakeReadOnlyBash()
    assert await decide(ch, bash, project, command="cat src/a.py") == "allow"
    assert await decide(ch, bash, project, command="cat .env") == "deny"
    assert await decide(ch, bash, project, command="cat src/../.env") == "deny"
    star = checker(home, deny=["Read(*.env)"])
    assert await decide(star, bash, project, command="grep -n KEY prod.env") == "deny"
    assert await decide(star, bash, project, command="grep -n KEY src/a.py") == "allow"
    assert await decide(ch, bash, project, command=f"cat {home}/.ssh/id_rsa") == "deny"
    assert (
        await decide(ch, bash, project, command="cat ../outside.txt") == "deny"
    )  # asks → headless
    assert await decide(ch, bash, project, command="cat 'unterminated") == "deny"
