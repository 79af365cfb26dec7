"""`${CLAUDE_SESSION_ID}` in a command's or skill's text is the session's id (Claude Code's
skills page, "Available string substitutions"; issue 22, item 1), typed as `/name` or loaded
through the Skill tool. Real files, an Agent over the local Messages API server."""

from __future__ import annotations

import json
from pathlib import Path

from skill_agents import run_in

from file_support import write_text as write
from queryloop.testing import text, tool_use, turn


async def test_the_session_id_is_substituted(tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    write(
        folder / ".claude" / "commands" / "note.md",
        "---\ndescription: take notes\n---\nNotes go to notes-${CLAUDE_SESSION_ID}.md\n",
    )
    write(
        folder / ".claude" / "skills" / "trace" / "SKILL.md",
        "---\nname: trace\ndescription: trace things\n---\nTrace id ${CLAUDE_SESSION_ID}.\n",
    )
    agent, requests = await run_in(folder, "/note", [turn(text("ok"))])
    sent = json.dumps(requests[0]["messages"])
    assert f"Notes go to notes-{agent.session_id}.md" in sent and "${CLAUDE" not in sent
    script = [turn(tool_use("Skill", {"skill": "trace"})), turn(text("ok"))]
    agent, requests = await run_in(folder, "trace it", script)
    assert f"Trace id {agent.session_id}." in json.dumps(requests[-1]["messages"])
