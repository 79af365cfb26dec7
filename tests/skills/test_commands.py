"""Custom slash commands (Claude Code's `.claude/commands/*.md`, ours in `.queryloop/commands/`):
found at every scope under trust, named by their path, their front matter read, their text
expanded (arguments, `!` commands under the permission rules, `@file`s) when the user types
`/name args` or the model calls the Skill tool — the whole Agent over the local server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from skill_agents import agent_on

from agent_support import messages_json
from file_support import write_text as write
from queryloop.config.discovery import SettingSources
from queryloop.config.project_config import project_config
from queryloop.skills import (
    SkillKind,
    SkillSource,
    load_skills,
    parse_command,
    substitute,
)
from queryloop.skills.expand import shell_commands
from queryloop.testing import MessagesServer, text, tool_use, turn

REVIEW = """---
description: Review a file for bugs
argument-hint: [file] [focus]
---
REVIEW-BODY: review $ARGUMENTS carefully; start with $0.
"""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    home, claude, proj = tmp_path / "home", tmp_path / "claude", tmp_path / "proj"
    monkeypatch.setenv("QUERYLOOP_HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    proj.mkdir()
    return {"home": home, "claude": claude, "proj": proj}


# ---- the substitution rules -------------------------------------------------------------


def test_arguments_follow_claude_codes_rules() -> None:
    # $ARGUMENTS as typed; $N and $ARGUMENTS[N] from 0, split like a shell line.
    body = "all=$ARGUMENTS first=$0 second=$ARGUMENTS[1] third=$2"
    assert substitute(body, 'a.py "two words"') == (
        'all=a.py "two words" first=a.py second=two words third=$2'
    )
    # Named arguments map to positions; a missing one is empty.
    assert substitute("$issue on $branch!", "42", names=("issue", "branch")) == "42 on !"
    # One backslash escapes; two stay and the placeholder still expands.
    assert substitute(r"costs \$1.00, \\$0", "x") == r"costs $1.00, \\x"
    # No placeholder took the arguments: they are appended, never lost.
    assert substitute("Fix the bug.", "in parser") == "Fix the bug.\n\nARGUMENTS: in parser"
    assert substitute("Deploy $1", "only-one") == "Deploy $1\n\nARGUMENTS: only-one"
    # One pass: an argument that looks like a placeholder is not expanded again.
    assert substitute("$0 / ${CLAUDE_SKILL_DIR}", "$1", variables={"CLAUDE_SKILL_DIR": "/s"}) == (
        "$1 / /s"
    )
    # A shell variable is not a placeholder.
    assert substitute("echo $HOME $PATH", "") == "echo $HOME $PATH"


def test_shell_command_syntax() -> None:
    body = "a !`echo one`\n!`echo two` and KEY=!`not this`\n```!\necho three\necho four\n```\n"
    assert shell_commands(body) == ["echo one", "echo two", "echo three\necho four"]


# ---- discovery --------------------------------------------------------------------------


def test_commands_are_found_named_and_ordered(env: dict[str, Path]) -> None:
    home, claude, proj = env["home"], env["claude"], env["proj"]
    write(claude / "commands" / "mine.md", "Claude user command")
    write(home / "commands" / "frontend" / "component.md", "---\ndescription: c\n---\nx")
    write(proj / ".claude" / "commands" / "review.md", REVIEW)
    write(proj / ".claude" / "commands" / "mine.md", "the project's mine")
    write(proj / ".queryloop" / "commands" / "ship.md", "Ship it.")
    write(proj / ".queryloop" / "skills" / "ship" / "SKILL.md", "---\ndescription: s\n---\nskill")
    write(proj / ".claude" / "commands" / ".hidden" / "x.md", "ignored")
    write(proj / ".claude" / "commands" / "bad.md", "---\nname: x\n  : y\n---\n")

    untrusted = load_skills(proj, home, trusted=False, claude=claude)
    assert sorted(untrusted.skills) == ["frontend:component", "mine"]  # a stranger's: none
    # ... counted in the folder's one notice (`config.project_config`), not one per kind.
    assert untrusted.notices == ()
    held = project_config(proj, home)
    assert (held.commands, held.skills) == (4, 1)
    assert (
        load_skills(
            proj, home, trusted=False, claude=claude, sources=SettingSources.of(["user"])
        ).notices
        == ()
    )
    found = load_skills(proj, home, trusted=True, claude=claude)
    assert found.notices == ()
    assert sorted(found.skills) == ["frontend:component", "mine", "review", "ship"]
    assert found.skills["mine"].source is SkillSource.USER  # the user's wins over the project's
    assert found.skills["mine"].description == "Claude user command"
    assert found.skills["ship"].kind is SkillKind.SKILL  # a skill wins over a command
    review = found.skills["review"]
    assert (review.kind, review.description) == (SkillKind.COMMAND, "Review a file for bugs")
    assert review.options.argument_hint == "[file] [focus]"  # not YAML, read as written
    assert [p.path.name for p in found.problems] == ["bad.md"]


def test_front_matter_options(tmp_path: Path) -> None:
    text_ = """---
allowed-tools: Read, Bash(git add:*) Bash(git commit -m 'x':*), Bash(echo ')
model: haiku
disable-model-invocation: "yes"
user-invocable: off
arguments: [issue, branch]
---
Body."""
    command = parse_command(text_, tmp_path / "c.md", "c", SkillSource.USER)
    options = command.options
    assert [str(r) for r in options.allowed_tools] == [
        "Read",
        "Bash(git add:*)",
        "Bash(git commit -m 'x':*)",
    ]
    assert "Bash(echo ')" in options.warnings[0]  # an allow rule that does not parse: dropped
    assert options.model == "haiku" and options.arguments == ("issue", "branch")
    assert options.disable_model_invocation and not options.user_invocable
    assert command.description == "Body."


# ---- end to end -------------------------------------------------------------------------


async def test_typed_command_sends_its_expanded_text(env: dict[str, Path]) -> None:
    write(env["proj"] / ".claude" / "commands" / "review.md", REVIEW)
    with MessagesServer([turn(text("Reviewed."))]) as server:
        agent = agent_on(server, env)
        result = await agent.run("/review src/x.py")
        await agent.aclose()
    body = messages_json(server.requests[0])
    assert result.text == "Reviewed."
    assert "/review src/x.py" in body  # the prompt as typed
    assert "REVIEW-BODY: review src/x.py carefully; start with src/x.py." in body
    assert "$ARGUMENTS" not in body


async def test_shell_lines_run_under_the_permission_rules(env: dict[str, Path]) -> None:
    proj = env["proj"]
    write(proj / "green.txt", "status-green\n")
    write(
        proj / ".claude" / "commands" / "status.md",
        "Status: !`cat $0.txt`\n"
        "Made: !`touch made-by-command.txt`\n"
        "Denied: !`printf %s-%s denied rule`\n"
        "```!\necho fenced-one\necho fenced-two\n```\n",
    )
    with MessagesServer([turn(text("ok"))]) as server:
        agent = agent_on(
            server, env, allowed_tools=["Bash(echo:*)"], disallowed_tools=["Bash(printf:*)"]
        )
        result = await agent.run("/status green")
        await agent.aclose()
    body = messages_json(server.requests[0])
    assert "Status: status-green" in body  # read-only: runs in default mode
    assert "fenced-one\\nfenced-two" in body  # an allow rule approves it
    # Not read-only, and nobody can approve it headless: not run, and the text says so.
    assert not (proj / "made-by-command.txt").exists()
    assert "the command `touch made-by-command.txt` was not run" in body
    # A deny rule refuses its command.
    assert "denied-rule" not in body  # what it would have printed
    assert "the command `printf %s-%s denied rule` was not run" in body
    assert "Bash(printf:*)" in body
    denied = sorted(d.tool_input["command"] for d in result.denials)
    assert denied == ["printf %s-%s denied rule", "touch made-by-command.txt"]


async def test_file_references_are_inlined_but_not_denied_ones(env: dict[str, Path]) -> None:
    proj = env["proj"]
    write(proj / "src" / "x.py", "INLINED-SOURCE = 1\n")
    write(proj / ".env", "SECRET-IN-ENV=1\n")
    write(proj / ".claude" / "commands" / "look.md", "Look at @$0 and @.env please.")
    with MessagesServer([turn(text("ok"))]) as server:
        agent = agent_on(server, env, disallowed_tools=["Read(.env)"])
        await agent.run("/look src/x.py")
        await agent.aclose()
    body = messages_json(server.requests[0])
    assert "INLINED-SOURCE = 1" in body
    assert "SECRET-IN-ENV" not in body


async def test_invocation_control_and_the_skill_tool(env: dict[str, Path]) -> None:
    commands = env["proj"] / ".claude" / "commands"
    write(commands / "deploy.md", "---\ndescription: Deploy\ndisable-model-invocation: true\n"
          "---\nDEPLOY-BODY $ARGUMENTS")  # fmt: skip
    write(commands / "conventions.md", "---\ndescription: House rules\nuser-invocable: false\n"
          "---\nCONVENTIONS-BODY")  # fmt: skip
    write(commands / "git" / "log.md", "---\ndescription: Recent log\n---\nLOG: !`cat $0`")
    write(env["proj"] / "main", "log-main\n")
    script = [
        turn(tool_use("Skill", {"skill": "deploy"})),
        turn(tool_use("Skill", {"skill": "git:log", "args": "main"})),
        turn(text("done")),
        turn(text("noted")),
        turn(text("deployed")),
    ]
    with MessagesServer(script) as server:
        agent = agent_on(server, env)
        await agent.start()
        assert sorted(agent.slash_commands) == ["deploy", "git:log"]  # not conventions
        await agent.run("go")
        await agent.run("/conventions")  # not the user's to invoke: plain text
        await agent.run("/deploy prod")
        await agent.aclose()
    first, second = messages_json(server.requests[0]), messages_json(server.requests[1])
    assert "git:log: Recent log" in first and "conventions: House rules" in first
    assert "deploy: Deploy" not in first  # the model is not told of a user-only command
    assert "can only be run by the user" in second and "DEPLOY-BODY" not in second
    assert "LOG: log-main" in messages_json(server.requests[2])  # the Skill tool runs `!` lines too
    assert "CONVENTIONS-BODY" not in messages_json(server.requests[3])
    assert "DEPLOY-BODY prod" in messages_json(server.requests[4])


async def test_a_commands_model_applies_to_its_prompt(env: dict[str, Path]) -> None:
    write(env["home"] / "commands" / "quick.md", "---\nmodel: haiku\n---\nQuick answer.")
    script = [turn(text("fast")), turn(text("normal"))]
    with MessagesServer(script) as server:
        agent = agent_on(server, env)
        await agent.run("/quick")
        await agent.run("and now?")
        await agent.aclose()
    assert [r["model"] for r in server.requests] == ["claude-haiku-5-5", "claude-sonnet-5-5"]


def test_no_real_claude_home_is_read() -> None:
    assert "claude" in os.environ["CLAUDE_CONFIG_DIR"]
