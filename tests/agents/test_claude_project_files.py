"""A Claude Code project's agents, commands and skills load as Claude Code loads them: agent
files in subfolders of `agents/`, the project's folders from any folder below it, front matter
Claude Code reads leniently (an unquoted `: ` in a description, a skill named in words), and
its documented agent fields without a notice on every start — the whole Agent over the local
server, real files in a temporary project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from subagent_support import body_text, by_thread, make_agent, result_text, system_text
from subagent_support import tool_results as results_of

from file_support import write_text as write
from queryloop.agents import load_agents
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

BUILDER = """---
name: builder
description: Builds the project. Use after a change is made.
tools: Read, Bash
---
BUILDER-PROMPT: build it.
"""
DEPLOYER = """---
name: deployer
description: Deploys a build.
---
DEPLOYER-PROMPT
"""


def delegating_model(agent_type: str, task: str) -> Any:
    """A parent that delegates `task` to `agent_type` once, then reports what came back; the
    child answers `<agent_type> done` and records its system prompt."""
    seen: dict[str, str] = {}

    def parent(body: dict[str, Any]) -> Turn:
        results = results_of(body)
        if not results:
            call = {"description": "delegate", "prompt": f"{task}: go", "subagent_type": agent_type}
            return turn(tool_use("Agent", call))
        error = " (error)" if results[-1].get("is_error") else ""
        return turn(text("parent saw: " + result_text(results[-1]).split("\n")[0] + error))

    def child(body: dict[str, Any]) -> Turn:
        seen["system"] = system_text(body)
        return turn(text(f"{agent_type} done"))

    return by_thread(parent, {task: child}), seen


async def test_agents_in_subfolders_load_and_a_namespaced_command_delegates_to_one(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "proj"
    write(project / ".claude" / "agents" / "team" / "builder.md", BUILDER)
    write(project / ".queryloop" / "agents" / "ops" / "deep" / "deployer.md", DEPLOYER)
    write(project / ".claude" / "commands" / "team" / "build.md", "BUILD-CMD: ask builder")
    script, seen = delegating_model("builder", "BUILD-TASK")
    with MessagesServer(script) as server:
        agent = make_agent(server, project, home, trust=True)
        result = await agent.run("/team:build")
        await agent.aclose()
    first = body_text(server.requests[0])
    assert "BUILD-CMD: ask builder" in first  # Claude Code's `/team:build`
    assert "deployer" in first and "builder" in first  # both in the agent listing
    assert result.text == "parent saw: builder done"
    assert "BUILDER-PROMPT: build it." in seen["system"]


async def test_started_in_a_subfolder_the_projects_agents_commands_and_skills_load(
    tmp_path: Path, home: Path
) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    cwd = root / "packages" / "app"
    cwd.mkdir(parents=True)
    write(root / ".claude" / "agents" / "builder.md", BUILDER)
    closer = BUILDER.replace("BUILDER-PROMPT", "APP-BUILDER-PROMPT")
    write(root / "packages" / ".claude" / "agents" / "builder.md", closer)
    write(root / ".claude" / "commands" / "ship.md", "SHIP-CMD: ship it via builder")
    write(
        root / ".queryloop" / "skills" / "tidy" / "SKILL.md", "---\ndescription: TIDY-SKILL\n---\nx"
    )
    script, seen = delegating_model("builder", "SHIP-TASK")
    with MessagesServer(script) as server:
        agent = make_agent(server, cwd, home, trust=True)
        result = await agent.run("/ship")
        await agent.aclose()
    first = body_text(server.requests[0])
    assert "SHIP-CMD: ship it via builder" in first and "TIDY-SKILL" in first
    assert result.text == "parent saw: builder done"
    # Every `.claude/agents/` from the repository root down is read; the closest one wins.
    assert "APP-BUILDER-PROMPT" in seen["system"]


def test_a_parent_folder_outside_the_repository_is_not_the_project(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    write(outer / ".claude" / "agents" / "builder.md", BUILDER)
    repo = outer / "repo"
    (repo / ".git").mkdir(parents=True)
    names = {d.name for d in load_agents(repo, user_home=tmp_path / "h", trusted=True).definitions}
    assert "builder" not in names
    # Outside any repository the project is the working folder itself.
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    write(tmp_path / "plain" / ".claude" / "agents" / "builder.md", BUILDER)
    loaded = load_agents(plain, user_home=tmp_path / "h", trusted=True)
    assert "builder" not in {d.name for d in loaded.definitions}


# Written in the shape of public agent files that Claude Code loads and strict YAML refuses
# (diet103/claude-code-infrastructure-showcase#20 and citypaul/.dotfiles#35 quoted theirs
# after other tools choked on them): an unquoted `: ` inside the description.
COLON_AGENT = """---
name: test-runner
description: Use this agent when: the user asks to run the tests, or says "check: all green"
model: inherit
color: green
---
RUNNER-PROMPT
"""
# Claude Code's hookify plugin names its skill in words (`plugins/hookify/skills/
# writing-rules/SKILL.md`); Claude Code invokes it by its folder, `writing-rules`.
WORDS_SKILL = """---
name: Writing Hookify Rules
description: This skill should be used when the user asks to "create a hookify rule".
version: 0.1.0
---
HOOKIFY-BODY: rules live in .claude/hookify.*.local.md
"""


async def test_front_matter_claude_code_accepts_loads(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    write(project / ".claude" / "agents" / "test-runner.md", COLON_AGENT)
    write(project / ".claude" / "skills" / "writing-rules" / "SKILL.md", WORDS_SKILL)
    script, seen = delegating_model("test-runner", "RUN-TASK")
    with MessagesServer(script) as server:
        agent = make_agent(server, project, home, trust=True)
        result = await agent.run("/writing-rules")
        notices = agent.notices
        await agent.aclose()
    assert "HOOKIFY-BODY" in body_text(server.requests[0])
    assert result.text == "parent saw: test-runner done"
    assert "RUNNER-PROMPT" in seen["system"]
    runner = load_agents(project, user_home=home, trusted=True).get("test-runner")
    assert runner is not None
    assert (
        runner.description
        == 'Use this agent when: the user asks to run the tests, or says "check: all green"'
    )
    assert not [n for n in notices if "skill" in n or "test-runner" in n], notices


async def test_documented_agent_fields_are_quiet_and_unknown_ones_are_told_once(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "proj"
    write(
        project / ".claude" / "agents" / "painter.md", COLON_AGENT.replace("test-runner", "painter")
    )
    odd = DEPLOYER.replace("name: deployer", "name: deployer\nallowed-tools: Read\nflavour: x")
    write(project / ".claude" / "agents" / "deployer.md", odd)
    with MessagesServer([turn(text("one")), turn(text("two"))]) as server:
        agent = make_agent(server, project, home, trust=True)
        await agent.run("first")
        await agent.run("second")  # the catalog is read again: nothing is told twice
        notices = agent.notices
        await agent.aclose()
    about_agents = [n for n in notices if "agent file" in n]
    assert len(about_agents) == 1, notices
    assert "deployer.md" in about_agents[0]
    assert "allowed-tools" in about_agents[0] and "flavour" in about_agents[0]
    assert "color" not in " ".join(notices)


async def test_a_plugins_agent_subfolder_joins_its_scoped_name(tmp_path: Path, home: Path) -> None:
    plugin = tmp_path / "kit"
    write(plugin / ".claude-plugin" / "plugin.json", '{"name": "kit"}')
    write(plugin / "agents" / "review" / "security.md", BUILDER.replace("builder", "security"))
    write(plugin / "agents" / "README.md", "# Agents of this plugin\n")  # documentation
    with MessagesServer([turn(text("ok"))]) as server:
        agent = make_agent(server, tmp_path, home, plugin_dirs=[plugin])
        await agent.run("hi")
        notices = agent.notices
        await agent.aclose()
    first = body_text(server.requests[0])
    assert "- kit:review:security: Builds the project." in first.replace("\\n", "\n")
    assert not [n for n in notices if "README" in n], notices
