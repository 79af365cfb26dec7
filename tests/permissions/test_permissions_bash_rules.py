"""Bash prefix rules must not be slipped past with shell metacharacters."""

from __future__ import annotations

from pathlib import Path

import pytest

from queryloop.permissions.rules import MatchContext, PermissionRule, RuleSet
from queryloop.permissions.shell.bash import analyze, deny_candidates

MC = MatchContext(Path("/work/p"), Path("/home/u"))
ALLOW_DIFF = RuleSet.from_strings(allow=["Bash(git diff:*)", "Bash(npm test)"])


@pytest.mark.parametrize(
    "command",
    [
        "git diff; rm -rf x",
        "git diff && curl evil",
        "git diff || curl evil",
        "git diff $(rm x)",
        'git diff "$(rm x)"',
        "git diff `rm x`",
        "git diff\nrm x",
        "git diff | sh",
        "git diff > /etc/passwd",
        "git diff >> ~/.bashrc",
        "git diff < /etc/shadow",
        "git diff & rm x",
        "git diff <(rm x)",
        "git diffx",
        "git dif",
        "sudo git diff",
        "git diff $'\\''\nrm -rf x\necho '",  # ANSI-C quoting hides a newline from naive parsers
        "git diff # '\nrm x\n'",  # a quote inside a comment is not a quote
        "git diff >/dev/nullx",
        "git diff 'unterminated",
    ],
)
def test_prefix_allow_rule_refuses_compound_and_hidden_commands(command: str) -> None:
    assert ALLOW_DIFF.find("allow", "Bash", command, MC) is None


@pytest.mark.parametrize(
    "command",
    [
        "git diff",
        "git diff HEAD~1 -- src",
        "git diff 2>&1",
        "git diff 'a; b'",
        "npm test && git diff",
    ],
)
def test_prefix_allow_rule_allows_plain_commands(command: str) -> None:
    assert ALLOW_DIFF.find("allow", "Bash", command, MC) is not None


def test_exact_rule_is_exact() -> None:
    rules = RuleSet.from_strings(allow=["Bash(npm test)"])
    assert rules.find("allow", "Bash", "npm test", MC) is not None
    assert rules.find("allow", "Bash", "npm test --watch", MC) is None


def test_wildcard_rule() -> None:
    rules = RuleSet.from_strings(allow=["Bash(npm run *)"])
    assert rules.find("allow", "Bash", "npm run build", MC) is not None
    assert rules.find("allow", "Bash", "npm run", MC) is not None
    assert rules.find("allow", "Bash", "npm install", MC) is None


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf x",
        "ls; rm -rf x",
        "ls && rm x",
        "echo $(rm x)",
        "echo `rm x`",
        "ls | rm x",
        "FOO=1 rm x",
        "sudo rm x",
        "env A=b nohup rm x",
        "(rm x)",
        "ls\nrm x",
    ],
)
def test_deny_rule_matches_any_subcommand(command: str) -> None:
    rules = RuleSet.from_strings(deny=["Bash(rm:*)"])
    assert rules.find("deny", "Bash", command, MC) is not None


def test_deny_rule_does_not_match_unrelated() -> None:
    rules = RuleSet.from_strings(deny=["Bash(rm:*)"])
    assert rules.find("deny", "Bash", "echo 'rm x'", MC) is None
    assert rules.find("deny", "Bash", "rmdir x", MC) is None


def test_analysis_reports_hazards() -> None:
    assert analyze("git diff").hazards == ()
    assert "command substitution" in analyze("a $(b)").hazards
    assert "redirection" in analyze("a > f").hazards
    assert analyze("a 'x > y'").hazards == ()
    assert deny_candidates("sudo rm -rf /")[-1] == "rm -rf /"


def test_rule_parsing() -> None:
    rule = PermissionRule.parse("Bash(git diff:*)", "allow")
    assert (rule.tool, rule.content, str(rule)) == ("Bash", "git diff:*", "Bash(git diff:*)")
    assert PermissionRule.parse("Bash", "deny").content is None
    assert PermissionRule.parse("Bash(*)", "deny").content is None


def test_mcp_and_webfetch_rules() -> None:
    rules = RuleSet.from_strings(
        allow=["mcp__github", "WebFetch(domain:example.com)"], deny=["mcp__db__drop_table"]
    )
    assert rules.find("allow", "mcp__github__create_issue", None, MC) is not None
    assert rules.find("allow", "mcp__githubx__a", None, MC) is None
    assert rules.find("deny", "mcp__db__drop_table", None, MC) is not None
    assert rules.find("deny", "mcp__db__select", None, MC) is None
    assert rules.find("allow", "WebFetch", "https://example.com/a", MC) is not None
    assert rules.find("allow", "WebFetch", "https://evil.com/?example.com", MC) is None
