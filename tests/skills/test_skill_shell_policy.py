"""`disableSkillShellExecution` (issue 22, item 1): the `!` commands of skills and commands
are not run, each is replaced by Claude Code's `[shell command execution disabled by
policy]`, whether the user types `/name` or the model calls the Skill tool. Real files, a
real Agent over the local Messages API server, in bypassPermissions mode so that nothing
but the setting stops the commands."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from skill_agents import run_in

from file_support import write_text as write
from queryloop.testing import Turn, text, tool_use, turn

POLICY = "[shell command execution disabled by policy]"


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


async def run(folder: Path, prompt: str, script: Sequence[Turn]) -> str:
    _, requests = await run_in(folder, prompt, script)
    return json.dumps(requests[-1]["messages"])


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
