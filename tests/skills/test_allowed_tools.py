"""A skill's `allowed-tools` while it runs (Claude Code: "grants permission for the listed
tools during the turn that invokes the skill ... clears when you send your next message";
"it does not restrict which tools are available"): allowed without asking for the rest of
the prompt that invoked it, never over a deny or ask rule, plan mode or a protected path; a
model that invokes such a skill is asked about first. Real Agent, local server, headless (an
ask is a denial), so every call that was not allowed shows as a denial."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skill_agents import agent_on

from queryloop.testing import MessagesServer, ToolUsePart, text, tool_use, turn

OUTSIDE = "OUTSIDE-THE-PROJECT-8815"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    home, proj = tmp_path / "home", tmp_path / "proj"
    monkeypatch.setenv("QUERYLOOP_HOME", str(home))
    (proj / ".claude" / "commands").mkdir(parents=True)
    outside = tmp_path / "elsewhere" / "notes.txt"
    outside.parent.mkdir()
    outside.write_text(f"{OUTSIDE}\n")
    return {"home": home, "proj": proj, "outside": outside}


def command(env: dict[str, Path], name: str, front: str, body: str = "Do it.") -> None:
    (env["proj"] / ".claude" / "commands" / f"{name}.md").write_text(f"---\n{front}\n---\n{body}")


def read_outside(env: dict[str, Path]) -> ToolUsePart:
    return tool_use("Read", {"file_path": str(env["outside"])})


async def test_allowed_tools_last_the_prompt_that_invoked_the_skill(env: dict[str, Path]) -> None:
    command(env, "peek", "allowed-tools: Read")
    script = [
        turn(read_outside(env)),
        turn(text("read it")),
        turn(read_outside(env)),
        turn(text("asked")),
    ]
    with MessagesServer(script) as server:
        agent = agent_on(server, env)
        first = await agent.run("/peek")
        second = await agent.run("read it again")
        await agent.aclose()
    # Outside the working folders a Read asks (headless: refused) — but not while /peek runs.
    assert not first.denials and OUTSIDE in json.dumps(server.requests[1])
    assert [d.tool_name for d in second.denials] == ["Read"]  # the grant ended with its prompt
    assert json.dumps(server.requests[3]).count(OUTSIDE) == 1


async def test_a_grant_never_loosens_a_deny_an_ask_plan_mode_or_a_protected_path(
    env: dict[str, Path],
) -> None:
    proj = env["proj"]
    command(env, "everything", "allowed-tools: Read Write Bash")
    (proj / "secret.txt").write_text("SECRET-CONTENT\n")
    (proj / ".queryloop").mkdir()
    (proj / ".queryloop" / "settings.json").write_text(
        json.dumps({"permissions": {"ask": ["Bash(git push:*)"]}})
    )
    calls = [
        tool_use("Read", {"file_path": "secret.txt"}),  # a deny rule
        tool_use("Write", {"file_path": ".claude/settings.json", "content": "{}"}),  # protected
        tool_use("Write", {"file_path": "made.txt", "content": "x"}),  # granted
    ]
    push = tool_use("Bash", {"command": "git push origin main"})  # an ask rule
    plan = tool_use("Write", {"file_path": "plan.txt", "content": "x"})
    script = [turn(*calls), turn(push), turn(text("done")), turn(plan), turn(text("planned"))]
    with MessagesServer(script) as server:
        agent = agent_on(server, env, disallowed_tools=["Read(secret.txt)"])
        result = await agent.run("/everything")
        await agent.aclose()
        planner = agent_on(server, env, permission_mode="plan")
        planned = await planner.run("/everything")
        await planner.aclose()
    assert sorted(d.tool_name for d in result.denials) == ["Bash", "Read", "Write"]
    assert "SECRET-CONTENT" not in json.dumps(server.requests[1])
    assert not (proj / ".claude" / "settings.json").exists()
    assert (proj / "made.txt").exists()
    assert [d.tool_name for d in planned.denials] == ["Write"]  # plan mode wins
    assert not (proj / "plan.txt").exists()


async def test_the_model_is_asked_before_it_starts_a_granting_skill(env: dict[str, Path]) -> None:
    command(env, "peek", "description: Peek outside\nallowed-tools: Read")
    command(env, "plain", "description: Nothing granted")
    script = [
        turn(tool_use("Skill", {"skill": "plain"}), tool_use("Skill", {"skill": "peek"})),
        turn(read_outside(env)),
        turn(text("no")),
        turn(tool_use("Skill", {"skill": "peek"})),
        turn(read_outside(env)),
        turn(text("yes")),
    ]
    with MessagesServer(script) as server:
        agent = agent_on(server, env)
        refused = await agent.run("look outside")
        await agent.aclose()
        allowed = agent_on(server, env, allowed_tools=["Skill(peek)"])
        approved = await allowed.run("look outside")
        await allowed.aclose()
    # Without approval (headless: nobody asked) the granting skill does not start, and its
    # Read stays refused; the skill without a grant starts freely.
    assert sorted(d.tool_name for d in refused.denials) == ["Read", "Skill"]
    assert "Skill(peek)" in json.dumps(server.requests[1])  # the rule that would allow it
    assert not approved.denials and OUTSIDE in json.dumps(server.requests[5])


async def test_shell_lines_use_the_grant(env: dict[str, Path]) -> None:
    command(env, "mark", "allowed-tools: Bash(touch:*)", "Mark: !`touch marked.txt` done")
    with MessagesServer([turn(tool_use("Bash", {"command": "touch by-model.txt"})),
                         turn(text("ok"))]) as server:  # fmt: skip
        agent = agent_on(server, env)
        result = await agent.run("/mark")
        await agent.aclose()
    assert not result.denials
    assert (env["proj"] / "marked.txt").exists() and (env["proj"] / "by-model.txt").exists()
