"""`disableSkillShellExecution` (issue 22, item 1): the `!` commands of skills and commands
are not run, each is replaced by Claude Code's `[shell command execution disabled by
policy]`, whether the user types `/name` or the model calls the Skill tool. Real files, a
real Agent over the local Messages API server, in bypassPermissions mode so that nothing
but the setting stops the commands."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from queryloop import Agent
from queryloop.testing import MessagesServer, text, tool_use, turn

POLICY = "[shell command execution disabled by policy]"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")


def write(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    return path


def project(tmp_path: Path) -> Path:
    folder = tmp_path / "proj"
    write(
        folder / ".claude" / "commands" / "status.md",
        "---\ndescription: status\n---\nInline: !`touch cmd-inline && echo RAN-INLINE`\n"
        "```!\ntouch cmd-fenced\necho RAN-FENCED\n```\nend\n",
    )
    write(
        folder / ".claude" / "skills" / "probe" / "SKILL.md",
        "---\nname: probe\ndescription: probe things\n---\nProbe: !`touch skill-ran`\n",
    )
    return folder


async def run(folder: Path, prompt: str, script: list[object]) -> str:
    with MessagesServer(script) as server:
        agent = Agent(
            "claude-sonnet-5-5",
            base_url=server.base_url,
            cwd=folder,
            trust=True,
            permission_mode="bypassPermissions",
        )
        try:
            await agent.run(prompt)
        finally:
            await agent.aclose()
        return json.dumps(server.requests[-1]["messages"])


async def test_typed_commands_and_the_skill_tool_run_no_shell(tmp_path: Path) -> None:
    folder = project(tmp_path)
    write(
        Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json",
        '{"disableSkillShellExecution": true}',
    )
    sent = await run(folder, "/status", [turn(text("ok"))])
    assert not (folder / "cmd-inline").exists() and not (folder / "cmd-fenced").exists()
    assert sent.count(POLICY) == 2 and "RAN-" not in sent
    assert "Inline: " + POLICY in sent and "end" in sent
    script = [turn(tool_use("Skill", {"skill": "probe"})), turn(text("ok"))]
    sent = await run(folder, "probe it", script)
    assert not (folder / "skill-ran").exists()
    assert "Probe: " + POLICY in sent


async def test_a_later_false_does_not_turn_it_back_on(tmp_path: Path) -> None:
    folder = project(tmp_path)
    write(folder / ".claude" / "settings.local.json", '{"disableSkillShellExecution": false}')
    write(
        Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json",
        '{"disableSkillShellExecution": true}',
    )
    await run(folder, "/status", [turn(text("ok"))])  # a later false does not turn it back on
    assert not (folder / "cmd-inline").exists()
    write(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "settings.json", "{}")
    await run(folder, "/status", [turn(text("ok"))])  # the control: without it they run
    assert (folder / "cmd-inline").exists()
