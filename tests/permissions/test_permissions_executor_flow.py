"""The checker and hooks wired into the real executor and built-in Bash tool: a denial reaches
the model as an is_error tool_result that says why, and the command never runs."""

from __future__ import annotations

from pathlib import Path

from perm_fixtures import SCRIPTS, decision_hook, run_bash

from queryloop.hooks import CommandHook, HookMatcher, HookRunner, HooksConfig
from queryloop.permissions import PermissionChecker, PermissionContext, PermissionMode, RuleSet


async def test_headless_ask_is_an_error_result_and_nothing_runs(tmp_path: Path) -> None:
    checker = PermissionChecker(PermissionContext(home=tmp_path))
    result = await run_bash(tmp_path, "touch made", checker)
    assert result.is_error
    assert "requires approval" in str(result.content) and "--allowed-tools 'Bash(touch:*)'" in str(
        result.content
    )
    assert not (tmp_path / "made").exists()


async def test_allow_rule_runs_and_compound_command_does_not(tmp_path: Path) -> None:
    rules = RuleSet.from_strings(allow=["Bash(touch:*)"])
    checker = PermissionChecker(PermissionContext(rules=rules, home=tmp_path))
    assert not (await run_bash(tmp_path, "touch made", checker)).is_error
    assert (tmp_path / "made").exists()
    sneaky = await run_bash(tmp_path, "touch ok $(touch sneaky)", checker)
    assert sneaky.is_error and not (tmp_path / "sneaky").exists()


async def test_deny_rule_message_reaches_the_model(tmp_path: Path) -> None:
    rules = RuleSet.from_strings(allow=["Bash"], deny=["Bash(rm:*)"], source="settings.json")
    checker = PermissionChecker(PermissionContext(rules=rules, home=tmp_path))
    (tmp_path / "keep").write_text("x")
    result = await run_bash(tmp_path, "ls && rm keep", checker)
    assert (
        result.is_error
        and "Bash(rm:*)" in str(result.content)
        and "settings.json" in str(result.content)
    )
    assert (tmp_path / "keep").exists()


async def test_pre_tool_use_hook_blocks_with_its_stderr(tmp_path: Path) -> None:
    checker = PermissionChecker(
        PermissionContext(rules=RuleSet.from_strings(allow=["Bash"]), home=tmp_path)
    )
    config = HooksConfig.of(
        PreToolUse=[HookMatcher("Bash", [CommandHook(str(SCRIPTS / "block_exit2.sh"))])]
    )
    hooks = HookRunner(config, cwd=tmp_path, session_id="s")
    result = await run_bash(tmp_path, "touch made", checker, hooks)
    assert result.is_error and "tests must pass first" in str(result.content)
    assert not (tmp_path / "made").exists()


async def test_a_hook_that_asks_makes_an_allowed_call_ask(tmp_path: Path) -> None:
    """An allow rule (or bypassPermissions) would run it; the hook's `ask` is stricter and
    wins: headless nobody can answer, so the call is refused."""
    allowed = RuleSet.from_strings(allow=["Bash(touch:*)"])
    for context in (
        PermissionContext(rules=allowed, home=tmp_path),
        PermissionContext(mode=PermissionMode.BYPASS, home=tmp_path),
    ):
        result = await run_bash(
            tmp_path, "touch made", PermissionChecker(context), decision_hook("ask")
        )
        assert result.is_error and "hook says so" in str(result.content)
        assert not (tmp_path / "made").exists()
    answered = PermissionChecker(PermissionContext(home=tmp_path), can_use_tool=lambda *a: True)
    result = await run_bash(tmp_path, "touch made", answered, decision_hook("ask"))
    assert not result.is_error and (tmp_path / "made").exists()


async def test_a_hook_that_allows_skips_the_question_but_never_a_deny_rule(
    tmp_path: Path,
) -> None:
    checker = PermissionChecker(
        PermissionContext(rules=RuleSet.from_strings(deny=["Bash(rm:*)"]), home=tmp_path)
    )
    assert not (await run_bash(tmp_path, "touch made", checker, decision_hook("allow"))).is_error
    assert (tmp_path / "made").exists()
    denied = await run_bash(tmp_path, "rm made", checker, decision_hook("allow"))
    assert denied.is_error and "Bash(rm:*)" in str(denied.content)
    assert (tmp_path / "made").exists()
