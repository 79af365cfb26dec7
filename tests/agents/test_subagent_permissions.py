"""A subagent never has more permission than its parent."""

from __future__ import annotations

import pytest

from queryloop.agents import AgentDefinition
from queryloop.agents.runner import child_permission
from queryloop.permissions import PermissionChecker, PermissionContext, PermissionMode, RuleSet


@pytest.mark.parametrize(
    ("parent", "asked", "expected"),
    [
        ("default", "bypassPermissions", "default"),
        ("acceptEdits", "bypassPermissions", "acceptEdits"),
        ("bypassPermissions", "plan", "plan"),
        ("bypassPermissions", None, "bypassPermissions"),
        ("plan", "acceptEdits", "plan"),
        ("acceptEdits", "default", "default"),
    ],
)
def test_the_stricter_mode_applies(parent: str, asked: str | None, expected: str) -> None:
    rules = RuleSet.from_strings(deny=["Bash(rm:*)"], allow=["Bash(git diff:*)"])
    checker = PermissionChecker(PermissionContext(mode=PermissionMode(parent), rules=rules))
    definition = AgentDefinition(name="x", description="d", permission_mode=asked)
    child = child_permission(checker, definition)
    assert isinstance(child, PermissionChecker)
    assert child.context.mode.value == expected
    assert child.context.rules is checker.context.rules  # the same deny and allow rules
    # "Always" answers given inside the subagent are the session's, both ways.
    assert child.context.session_allow is checker.context.session_allow


async def test_parallel_subagents_ask_the_person_one_question_at_a_time() -> None:
    import asyncio
    from pathlib import Path

    from queryloop.agents.wiring import serialize_asks
    from queryloop.tools.base import ToolContext
    from queryloop.tools.builtin import BashTool

    open_questions = 0
    most = 0

    async def ask(request: object) -> bool:
        nonlocal open_questions, most
        open_questions += 1
        most = max(most, open_questions)
        await asyncio.sleep(0.01)
        open_questions -= 1
        return True

    parent = PermissionChecker(PermissionContext(), ask=serialize_asks(ask))
    definition = AgentDefinition(name="x", description="d")
    children = [child_permission(parent, definition) for _ in range(3)]
    ctx = ToolContext(cwd=Path.cwd())
    decisions = await asyncio.gather(
        *(c.check(BashTool(), {"command": "touch x"}, ctx) for c in [parent, *children])
    )
    assert all(d.behavior == "allow" for d in decisions)
    assert most == 1
