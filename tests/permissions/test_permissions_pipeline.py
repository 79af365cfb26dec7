"""One decision pipeline: a PreToolUse hook's answer and a person's answer are inputs to it.

Issue 31: with `Bash(rm:*)` denied, `$X -rf x` asked (headless: refused) without a hook but
ran when a PreToolUse hook answered `allow`, because the checker wrote the decision order a
second time for hooks and left out the fail-closed doubt, plan mode and ask rules. A hook's
`allow` is an allow rule's answer (Claude Code: it skips the prompt; deny and ask rules still
apply); only a person (`can_use_tool`, the REPL prompt) may approve what fails closed.
"""

from __future__ import annotations

import asyncio
import importlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perm_fixtures import command_allow_hook, decision_hook, run_bash

from queryloop.hooks import HookRunner
from queryloop.permissions import (
    PermissionAllow,
    PermissionChecker,
    PermissionContext,
    PermissionMode,
    PermissionRequest,
    RuleSet,
    guard,
)
from queryloop.permissions.rules import MatchContext
from queryloop.tools.base import DenialSource, PreToolUseOutcome, ToolContext
from queryloop.tools.builtin import BashTool

HOOKS = ["command", "callable"]

FAIL_CLOSED = [
    # (deny, ask, mode, command): each must not run when a hook answers allow
    pytest.param(["Bash(rm:*)"], [], PermissionMode.DEFAULT, "X=rm; $X -rf victim", id="var"),
    pytest.param(["Bash(rm:*)"], [], PermissionMode.DEFAULT, "$(echo rm) -rf victim", id="subst"),
    pytest.param(["Bash(rm:*)"], [], PermissionMode.DEFAULT, 'eval "rm -rf victim"', id="eval"),
    pytest.param(["Bash(rm:*)"], [], PermissionMode.BYPASS, "X=rm; $X -rf victim", id="bypass"),
    pytest.param([], [], PermissionMode.DEFAULT, "rm victim > .claude/settings.json", id="prot"),
    pytest.param([], [], PermissionMode.PLAN, "rm victim", id="plan"),
    pytest.param([], ["Bash(rm:*)"], PermissionMode.DEFAULT, "rm victim", id="ask-rule"),
    pytest.param([], ["Bash(rm:*)"], PermissionMode.BYPASS, "rm victim", id="ask-bypass"),
]


def hook_runner(kind: str, cwd: Path) -> HookRunner:
    return command_allow_hook(cwd) if kind == "command" else decision_hook("allow")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{}")
    (tmp_path / "victim").write_text("keep me")
    return tmp_path


def context(
    project: Path, mode: PermissionMode, deny: list[str], ask: list[str], allow: list[str]
) -> PermissionContext:
    rules = RuleSet.from_strings(allow=allow, ask=ask, deny=deny)
    return PermissionContext(mode=mode, rules=rules, home=project / "home")


@pytest.mark.parametrize("kind", HOOKS)
@pytest.mark.parametrize(("deny", "ask", "mode", "command"), FAIL_CLOSED)
async def test_a_hook_allow_never_runs_what_fails_closed(
    kind: str, deny: list[str], ask: list[str], mode: PermissionMode, command: str, project: Path
) -> None:
    """Run for real through the executor, headless: the file is still there."""
    checker = PermissionChecker(context(project, mode, deny, ask, ["Bash"]))
    result = await run_bash(project, command, checker, hook_runner(kind, project))
    assert result.is_error, command
    assert (project / "victim").read_text() == "keep me"
    assert (project / ".claude" / "settings.json").read_text() == "{}"


@pytest.mark.parametrize("kind", HOOKS)
async def test_a_hook_allow_still_runs_what_nothing_refuses(kind: str, project: Path) -> None:
    """The hook's allow is not dead: with no rule at all, headless, it lets the call run."""
    checker = PermissionChecker(context(project, PermissionMode.DEFAULT, ["Bash(rm:*)"], [], []))
    result = await run_bash(project, "touch made", checker, hook_runner(kind, project))
    assert not result.is_error and (project / "made").exists()


def answering(answer: bool, asked: list[PermissionRequest]) -> Any:
    def can_use_tool(name: str, input: Mapping[str, Any], request: PermissionRequest) -> bool:
        asked.append(request)
        return answer

    return can_use_tool


@pytest.mark.parametrize("answer", [True, False])
async def test_a_person_decides_a_doubt_the_hook_allowed(answer: bool, project: Path) -> None:
    """The doubt is asked although the hook allowed; the person's answer decides it."""
    asked: list[PermissionRequest] = []
    ctx = context(project, PermissionMode.DEFAULT, ["Bash(rm:*)"], [], [])
    checker = PermissionChecker(ctx, can_use_tool=answering(answer, asked))
    result = await run_bash(project, "X=rm; $X -rf victim", checker, decision_hook("allow"))
    assert len(asked) == 1 and "Bash(rm:*)" in asked[0].reason
    assert result.is_error is not answer
    assert (project / "victim").exists() is not answer


async def test_a_person_may_approve_a_doubt_without_a_hook(project: Path) -> None:
    asked: list[PermissionRequest] = []
    ctx = context(project, PermissionMode.BYPASS, ["Bash(rm:*)"], [], [])
    checker = PermissionChecker(ctx, can_use_tool=answering(True, asked))
    decision = await checker.check(BashTool(), {"command": "$X -rf x"}, ToolContext(cwd=project))
    assert decision.behavior == "allow" and decision.source is DenialSource.USER
    assert len(asked) == 1


async def test_the_hook_allow_headless_denial_names_the_doubt(project: Path) -> None:
    checker = PermissionChecker(context(project, PermissionMode.DEFAULT, ["Bash(rm:*)"], [], []))
    decision = await checker.check(
        BashTool(),
        {"command": "$X -rf x"},
        ToolContext(cwd=project),
        hook=PreToolUseOutcome("allow"),
    )
    assert decision.behavior == "deny" and "Bash(rm:*)" in decision.message
    assert "literal program names" in decision.message


async def test_plan_mode_refuses_a_write_whatever_the_hook_says(project: Path) -> None:
    checker = PermissionChecker(context(project, PermissionMode.PLAN, [], [], []))
    for answer in ("allow", "ask"):
        decision = await checker.check(
            BashTool(),
            {"command": "touch made"},
            ToolContext(cwd=project),
            hook=PreToolUseOutcome(answer),
        )
        assert decision.behavior == "deny" and decision.source is DenialSource.MODE, answer


async def test_an_ask_rule_asks_although_the_hook_allows(project: Path) -> None:
    asked: list[PermissionRequest] = []
    ctx = context(project, PermissionMode.DEFAULT, [], ["Bash(touch:*)"], [])
    checker = PermissionChecker(ctx, can_use_tool=answering(False, asked))
    decision = await checker.check(
        BashTool(),
        {"command": "touch x"},
        ToolContext(cwd=project),
        hook=PreToolUseOutcome("allow"),
    )
    assert decision.behavior == "deny" and len(asked) == 1
    assert "Bash(touch:*)" in asked[0].reason


async def test_a_rewritten_input_the_person_approves_still_meets_the_deny_rules(
    project: Path,
) -> None:
    """`can_use_tool` approves `touch made` but rewrites it to `rm -rf victim`: denied."""

    def rewrite(name: str, input: Mapping[str, Any], request: PermissionRequest) -> PermissionAllow:
        return PermissionAllow(updated_input={"command": "rm -rf victim"})

    ctx = context(project, PermissionMode.DEFAULT, ["Bash(rm:*)"], [], [])
    checker = PermissionChecker(ctx, can_use_tool=rewrite)
    result = await run_bash(project, "touch made", checker)
    assert result.is_error and "Bash(rm:*)" in str(result.content)
    assert (project / "victim").exists() and not (project / "made").exists()


async def test_evaluate_takes_the_hook_answer_without_asking(project: Path) -> None:
    checker = PermissionChecker(context(project, PermissionMode.DEFAULT, ["Bash(rm:*)"], [], []))
    tool, ctx = BashTool(), ToolContext(cwd=project)
    allow, ask = PreToolUseOutcome("allow"), PreToolUseOutcome("ask", reason="check it")
    assert (await checker.evaluate(tool, {"command": "touch a"}, ctx, hook=allow)).behavior == (
        "allow"
    )
    assert (await checker.evaluate(tool, {"command": "$X -rf x"}, ctx, hook=allow)).behavior == (
        "ask"
    )
    asked = await checker.evaluate(tool, {"command": "touch a"}, ctx, hook=ask)
    assert asked.behavior == "ask" and "check it" in asked.message


async def test_a_command_whose_writes_cannot_be_analysed_asks(project: Path) -> None:
    """A NUL byte made the write analysis raise (a crash of the check); it now asks."""
    checker = PermissionChecker(context(project, PermissionMode.DEFAULT, [], [], ["Bash"]))
    decision = await checker.evaluate(
        BashTool(), {"command": "echo a > 'x\x00y'"}, ToolContext(cwd=project)
    )
    assert decision.behavior == "ask" and "could not be analysed" in decision.message


def test_the_docstring_lists_the_steps_in_their_order() -> None:
    """The order is declared once (`pipeline.STEPS`); the module docstring describes it."""
    pipeline = importlib.import_module("queryloop.permissions.pipeline")
    doc = pipeline.__doc__ or ""
    named = re.findall(r"^\s*\d+\. `(\w+)`", doc, flags=re.MULTILINE)
    assert named == [step.__name__ for step in pipeline.STEPS]
    assert len(named) >= 14


# --- random combinations: a hook's allow is never more permissive than the hard steps ---

DENY_POOL = ["Bash(rm:*)", "Bash(curl:*)", "Read(./.env)", "Bash(git push:*)"]
ASK_POOL = ["Bash(touch:*)", "Bash(git:*)", "Bash(echo:*)"]
ALLOW_POOL = ["Bash", "Bash(touch:*)", "Bash(echo:*)", "Bash(rm:*)"]
COMMANDS = [
    "rm -rf x",
    "X=rm; $X -rf x",
    "$X -rf x",
    "$(echo rm) -rf x",
    'eval "rm -rf x"',
    "bash -c 'rm -rf x'",
    "echo x | sh",
    "touch made",
    "echo x > .claude/settings.json",
    "echo hi",
    "cat .env",
    "cat $F",
    "ls",
    "git push",
    "git status",
    "curl http://127.0.0.1:1/",
    "$(echo curl) http://127.0.0.1:1/",
]


@st.composite
def scenario(draw: st.DrawFn) -> tuple[RuleSet, PermissionMode, str]:
    rules = RuleSet.from_strings(
        deny=draw(st.lists(st.sampled_from(DENY_POOL), unique=True)),
        ask=draw(st.lists(st.sampled_from(ASK_POOL), max_size=1)),
        allow=draw(st.lists(st.sampled_from(ALLOW_POOL), unique=True)),
    )
    return rules, draw(st.sampled_from(list(PermissionMode))), draw(st.sampled_from(COMMANDS))


async def _decide(
    rules: RuleSet, mode: PermissionMode, command: str, cwd: Path, hook: str | None
) -> tuple[str, str, bool, bool, bool]:
    checker = PermissionChecker(PermissionContext(mode=mode, rules=rules, home=cwd / "home"))
    ctx = ToolContext(cwd=cwd)
    tool, input = BashTool(), {"command": command}
    outcome = PreToolUseOutcome(hook) if hook else None  # type: ignore[arg-type]
    base = await checker.evaluate(tool, input, ctx)
    with_hook = await checker.check(tool, input, ctx, hook=outcome)
    denied = checker.denied_by_rule(tool, input, ctx) is not None
    doubt = guard.bash_doubt(rules, command, ctx, MatchContext(cwd, cwd / "home")) is not None
    asks = rules.find("ask", "Bash", command, MatchContext(cwd, cwd / "home")) is not None
    return base.behavior, with_hook.behavior, denied, doubt, asks


@settings(max_examples=300, deadline=None)
@given(case=scenario(), hook=st.sampled_from(["allow", "ask"]))
def test_a_hook_is_never_more_permissive_than_the_hard_steps(
    case: tuple[RuleSet, PermissionMode, str], hook: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    rules, mode, command = case
    cwd = tmp_path_factory.getbasetemp() / "pipeline-hypothesis"
    (cwd / ".claude").mkdir(parents=True, exist_ok=True)
    base, decided, denied, doubt, asks = asyncio.run(_decide(rules, mode, command, cwd, hook))
    # headless: an ask nobody answers is a denial, so "not allowed" reads "deny" here
    if denied or base == "deny":
        assert decided == "deny", (rules, mode, command)
    if doubt or asks or hook == "ask":
        assert decided == "deny", (rules, mode, command)
