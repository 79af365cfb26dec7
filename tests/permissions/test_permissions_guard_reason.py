"""The fail-closed guard's reason reads as a sentence, for a doubt and for a sure match."""

from __future__ import annotations

from pathlib import Path

from queryloop.permissions.guard import bash_doubt
from queryloop.permissions.rules import MatchContext, RuleSet
from queryloop.tools.base import ToolContext


def _doubt(rules: RuleSet, command: str, cwd: Path) -> str:
    found = bash_doubt(rules, command, ToolContext(cwd=cwd), MatchContext(cwd, cwd))
    assert found is not None
    return found.reason


def test_an_ask_rule_that_surely_applies_says_so(tmp_path: Path) -> None:
    rules = RuleSet.from_strings(ask=["Bash(git push:*)"], source="settings")
    reason = _doubt(rules, "git push origin main", tmp_path)
    assert reason == "the rule Bash(git push:*) (from settings) applies"


def test_a_rule_that_may_apply_says_why(tmp_path: Path) -> None:
    rules = RuleSet.from_strings(deny=["Bash(curl:*)"], source="settings")
    reason = _doubt(rules, 'eval "$CMD"', tmp_path)
    assert reason.startswith("the rule Bash(curl:*) (from settings) may apply: ")
    assert not reason.endswith(": ")
