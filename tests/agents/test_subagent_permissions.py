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
