"""The Agent's options are grouped by concern and declared once: each keyword of `Agent(...)`
is a field of one group, `AgentKwargs` names exactly those fields, and a keyword lands in its
group. An Agent's session is unstarted (answers from its options) or started (its parts all
there), and `Agent.resume` opens the agent around the stored conversation."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from agent_helpers import local_agent

from queryloop import Agent
from queryloop.agent import AgentKwargs, AgentOptions
from queryloop.agent.options import OWN_PARAMETERS, option_fields, option_groups
from queryloop.agent.runtime import Runtime
from queryloop.permissions.modes import PermissionMode
from queryloop.testing import MessagesServer, text, turn

README = Path(__file__).resolve().parents[2] / "README.md"


pytestmark = pytest.mark.usefixtures("home")


def test_agent_kwargs_are_the_union_of_the_groups_fields() -> None:
    groups = [f.default_factory for f in dataclasses.fields(AgentOptions)]
    declared = [f.name for group in groups for f in dataclasses.fields(group)]  # type: ignore[arg-type]
    assert len(declared) == len(set(declared)) == len(option_fields())  # each in one group
    assert set(AgentKwargs.__annotations__) == set(declared) - OWN_PARAMETERS
    assert set(option_groups()) == set(declared)


def test_a_keyword_lands_in_its_group(tmp_path: Path) -> None:
    agent = Agent(
        "claude-haiku-5-5", max_turns=3, permission_mode="plan", cwd=tmp_path, persist=False,
        context_window=50_000, allowed_tools=["Read"], max_subagent_depth=2, env={"A": "1"},
    )  # fmt: skip
    options = agent.options
    assert options.model.model == "claude-haiku-5-5"
    assert options.limits.max_turns == 3
    assert options.permissions.permission_mode is PermissionMode.PLAN
    assert options.permissions.allowed_tools == ["Read"]
    assert options.workspace.cwd == tmp_path.resolve()
    assert options.workspace.env == {"A": "1"}
    assert options.session.persist is False
    assert options.context.context_window == 50_000
    assert options.subagents.max_subagent_depth == 2
    groups = option_groups()
    assert {groups[n] for n in ("max_turns", "cwd", "hooks", "tools")} == {
        "limits", "workspace", "callbacks", "tools"}  # fmt: skip


def test_the_readme_keywords_are_options() -> None:
    table = README.read_text().split("| keyword | what it does |", 1)[1].split("\n\n", 1)[0]
    named = set(re.findall(r"`([a-z_]+)=", table))
    assert {"tools", "cwd", "setting_sources", "max_turns"} <= named
    assert named <= set(option_fields())


def test_an_unstarted_agent_answers_from_its_options(tmp_path: Path) -> None:
    agent = Agent("claude-haiku-5-5", permission_mode="acceptEdits", cwd=tmp_path)
    assert agent._runtime is None
    assert agent.model == "claude-haiku-5-5"
    assert agent.permission_mode == str(PermissionMode.ACCEPT_EDITS)
    assert (agent.tool_names, agent.notices, agent.skills, agent.mcp_status) == ([], [], {}, {})
    assert agent.tasks is None and agent.checkpoints() == [] and agent.context_usage() == {}
    assert agent.home == tmp_path / "home"
    agent.abort()  # nothing runs: nothing to stop


async def test_resume_opens_the_agent_around_the_stored_session(tmp_path: Path) -> None:
    with MessagesServer([turn(text("first")), turn(text("second"))]) as server:
        first = local_agent(server, tmp_path)
        await first.run("one")
        await first.aclose()
        assert first._runtime is None  # closed: unstarted again
        resumed = Agent.resume(first.session_id[:8], base_url=server.base_url, cwd=tmp_path)
        assert resumed._runtime is None
        assert resumed.session_id == first.session_id == resumed.options.session.session_id
        assert resumed.messages == first.messages and resumed.turns == first.turns
        assert [c.prompt for c in resumed.checkpoints()] == ["one"]  # from its folder
        await resumed.run("two")
        assert isinstance(resumed._runtime, Runtime)
        assert resumed.turns == first.turns + 1
        await resumed.aclose()
