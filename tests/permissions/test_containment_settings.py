"""Claude Code's stricter permission switches (issue 21): `disableBypassPermissionsMode`,
`denyInsteadOfPrompting`, `blockWritesOutsideWorkingDirectories`, and the sandbox hook
(`PermissionContext.sandboxed_bash`, what `sandbox.autoAllowBashIfSandboxed` wires)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Unpack

import pytest
from perm_fixtures import Rules

from file_support import write_json as write
from queryloop import Agent
from queryloop.agent.options import PermissionModeName
from queryloop.config import load_settings
from queryloop.errors import ConfigError
from queryloop.permissions import (
    PermissionChecker,
    PermissionContext,
    PermissionMode,
    PermissionRequest,
    RuleSet,
)
from queryloop.tools.base import ToolContext
from queryloop.tools.builtin import BashTool, WriteTool


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "repo", tmp_path / "qlhome"
    (project / "src").mkdir(parents=True)
    home.mkdir()
    return project, home


def test_the_switches_are_read_from_every_file(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(home / "settings.json", {"permissions": {"disableBypassPermissionsMode": "disable"}})
    write(project / ".queryloop/settings.json", {"permissions": {"denyInsteadOfPrompting": True}})
    write(
        project / ".queryloop/settings.local.json",
        {"permissions": {"blockWritesOutsideWorkingDirectories": True}},
    )
    s = load_settings(project, user_home=home, trusted=True)
    assert (s.disable_bypass_mode, s.deny_instead_of_prompting, s.block_writes_outside) == (
        True,
        True,
        True,
    )
    assert not s.problems


def test_an_untrusted_project_can_tighten_but_a_later_false_never_loosens(
    dirs: tuple[Path, Path],
) -> None:
    project, home = dirs
    write(home / "settings.json", {"permissions": {"denyInsteadOfPrompting": True}})
    write(
        project / ".queryloop/settings.json",
        {
            "permissions": {
                "denyInsteadOfPrompting": False,
                "blockWritesOutsideWorkingDirectories": True,
                "disableBypassPermissionsMode": "disable",
            }
        },
    )
    s = load_settings(project, user_home=home, trusted=False)
    assert s.deny_instead_of_prompting and s.block_writes_outside and s.disable_bypass_mode


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("disableBypassPermissionsMode", True, 'must be "disable"'),
        ("denyInsteadOfPrompting", "yes", "must be true or false"),
        ("blockWritesOutsideWorkingDirectories", 1, "must be true or false"),
    ],
)
def test_a_wrong_type_is_an_error_with_its_position(
    dirs: tuple[Path, Path], key: str, value: object, message: str
) -> None:
    project, home = dirs
    path = home / "settings.json"
    path.write_text(
        '{\n  "permissions": {\n    ' + json.dumps(key) + ": " + json.dumps(value) + "}}"
    )
    [problem] = load_settings(project, user_home=home, trusted=True).errors
    assert message in problem.message and str(problem).startswith(f"{path}:3:5: ")


def test_bypass_cannot_be_entered_when_disabled(dirs: tuple[Path, Path]) -> None:
    project, home = dirs
    write(home / "settings.json", {"permissions": {"disableBypassPermissionsMode": "disable"}})
    s = load_settings(project, user_home=home, trusted=True)
    with pytest.raises(ConfigError, match="disableBypassPermissionsMode"):
        PermissionContext.from_settings(s, mode="bypassPermissions")
    context = PermissionContext.from_settings(s, mode="acceptEdits")
    with pytest.raises(ConfigError, match="disableBypassPermissionsMode"):
        context.set_mode(PermissionMode.BYPASS)  # the REPL's mode switch
    assert context.mode is PermissionMode.ACCEPT_EDITS
    context.set_mode(PermissionMode.PLAN)
    # (mypy keeps the narrowing of `context.mode` across the call)
    assert context.mode is PermissionMode.PLAN  # type: ignore[comparison-overlap]


@pytest.mark.parametrize("how", ["defaultMode", "option"])
async def test_an_agent_refuses_a_disabled_bypass_mode(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    project, home = dirs
    permissions: dict[str, Any] = {"disableBypassPermissionsMode": "disable"}
    if how == "defaultMode":
        permissions["defaultMode"] = "bypassPermissions"
    write(home / "settings.json", {"permissions": permissions})
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    mode: PermissionModeName | None = "bypassPermissions" if how == "option" else None
    agent = Agent("claude-sonnet-5-5", cwd=project, home=home, permission_mode=mode)
    with pytest.raises(ConfigError, match="bypassPermissions mode is disabled"):
        await agent.start()
    await agent.aclose()


async def test_deny_instead_of_prompting_never_asks(dirs: tuple[Path, Path]) -> None:
    project, _ = dirs
    asked: list[PermissionRequest] = []

    async def ask(request: PermissionRequest) -> bool:
        asked.append(request)
        return True

    context = PermissionContext(deny_instead_of_prompting=True, home=project.parent)
    checker = PermissionChecker(context, ask=ask, can_use_tool=None)
    decision = await checker.check(BashTool(), {"command": "touch x"}, ToolContext(cwd=project))
    assert decision.behavior == "deny" and asked == []
    assert "'Bash(touch:*)'" in decision.message
    allowed = PermissionChecker(
        PermissionContext(
            deny_instead_of_prompting=True, rules=RuleSet.from_strings(allow=["Bash(touch:*)"])
        ),
        ask=ask,
    )
    run = await allowed.check(BashTool(), {"command": "touch x"}, ToolContext(cwd=project))
    assert run.behavior == "allow"


@pytest.mark.parametrize("mode", list(PermissionMode))
async def test_block_writes_outside_denies_in_every_mode(
    dirs: tuple[Path, Path], mode: PermissionMode
) -> None:
    project, _ = dirs
    outside = project.parent / "elsewhere.txt"
    context = PermissionContext(
        mode=mode,
        rules=RuleSet.from_strings(allow=["Bash(*)", "Edit(//**)"]),
        block_writes_outside=True,
        home=project.parent / "home",
    )
    checker = PermissionChecker(context)
    ctx = ToolContext(cwd=project)
    given = {"file_path": str(outside), "content": "x"}
    written = await checker.check(WriteTool(), given, ctx)
    assert written.behavior == "deny" and "blockWritesOutsideWorkingDirectories" in written.message
    for command in (f"echo x > {outside}", f"cp src/a {outside}", "tee ../elsewhere.txt"):
        decision = await checker.evaluate(BashTool(), {"command": command}, ctx)
        assert decision.behavior == "deny", command
    if mode is not PermissionMode.PLAN:
        inside = await checker.evaluate(BashTool(), {"command": "echo x > src/a"}, ctx)
        assert inside.behavior == "allow"
        null = await checker.evaluate(BashTool(), {"command": "echo x > /dev/null"}, ctx)
        assert null.behavior == "allow"


async def test_a_sandboxed_command_is_allowed_where_it_would_ask(dirs: tuple[Path, Path]) -> None:
    project, _ = dirs
    seen: list[str] = []

    def sandboxed(command: str) -> bool:
        seen.append(command)
        return not command.startswith("docker")

    def checker(**rules: Unpack[Rules]) -> PermissionChecker:
        context = PermissionContext(
            rules=RuleSet.from_strings(**rules), sandboxed_bash=sandboxed, home=project.parent
        )
        return PermissionChecker(context)

    ctx = ToolContext(cwd=project)

    async def verdict(command: str, **rules: list[str]) -> str:
        return (await checker(**rules).evaluate(BashTool(), {"command": command}, ctx)).behavior

    assert await verdict("make build") == "allow"
    assert await verdict("docker run x") == "ask"  # not sandboxed: asks as before
    assert await verdict("make build", deny=["Bash(make:*)"]) == "deny"
    assert await verdict("make build", ask=["Bash(make:*)"]) == "ask"
    assert await verdict("X=make; $X build", deny=["Bash(make:*)"]) == "ask"  # fail closed
    assert await verdict("echo x > .mcp.json") == "ask"  # a protected path
    plan = PermissionChecker(
        PermissionContext(mode=PermissionMode.PLAN, sandboxed_bash=sandboxed, home=project.parent)
    )
    assert (await plan.evaluate(BashTool(), {"command": "make"}, ctx)).behavior == "deny"
    assert "make build" in seen
