"""Memory end to end: nested QUERYLOOP.md / AGENTS.md of folders the agent reads or edits,
attached once; lines added with `Agent.add_memory` (the REPL's `#`)."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from agent_support import agent_on as shared_agent_on
from agent_support import messages_json
from queryloop.context.memory_edit import (
    MemoryScope,
    add_memory_line,
    memory_path,
    parse_memory_shortcut,
)
from queryloop.testing import MessagesServer, text, tool_use, turn


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    home = tmp_path / "home"
    monkeypatch.setenv("QUERYLOOP_HOME", str(home))
    return home


agent_on = partial(shared_agent_on, permission_mode="acceptEdits")


async def test_nested_memory_of_read_and_edited_folders_is_attached_once(
    tmp_path: Path, home: Path
) -> None:
    project = tmp_path / "proj"
    (project / "sub" / "pkg").mkdir(parents=True)
    (project / "web").mkdir()
    (project / "other").mkdir()
    (project / "sub" / "QUERYLOOP.md").write_text("SUB-RULE: tabs, not spaces.\n")
    (project / "sub" / "pkg" / "AGENTS.md").write_text("PKG-RULE: no globals.\n")
    (project / "sub" / "pkg" / "mod.py").write_text("x = 1\n")
    (project / "web" / "QUERYLOOP.md").write_text("WEB-RULE: no jQuery.\n")
    (project / "other" / "QUERYLOOP.md").write_text("OTHER-RULE: never shown.\n")
    script = [
        turn(tool_use("Read", {"file_path": "sub/pkg/mod.py"})),
        turn(tool_use("Read", {"file_path": str(project / "sub" / "pkg" / "mod.py")})),
        turn(tool_use("Write", {"file_path": "web/app.js", "content": "go()\n"})),
        turn(text("Done.")),
        turn(tool_use("Read", {"file_path": "sub/pkg/mod.py"})),
        turn(text("Again.")),
    ]
    with MessagesServer(script) as server:
        agent = agent_on(server, project, home)
        await agent.run("look at mod.py and write app.js")
        await agent.run("read it once more")
        await agent.aclose()
        bodies = server.requests
    assert "SUB-RULE" not in messages_json(bodies[0])
    # After the first Read: both folders' memory, outermost first.
    second = messages_json(bodies[1])
    assert second.count("SUB-RULE") == 1 and second.count("PKG-RULE") == 1
    assert second.index("SUB-RULE") < second.index("PKG-RULE")
    # Written-to folders count too; nothing is attached twice, in this prompt or the next.
    assert messages_json(bodies[3]).count("WEB-RULE") == 1
    for body in bodies[2:]:
        assert (
            messages_json(body).count("SUB-RULE") == 1
            and messages_json(body).count("PKG-RULE") == 1
        )
    assert all("OTHER-RULE" not in messages_json(b) for b in bodies)
    assert all(not v for v in server.violations)


async def test_add_memory_reaches_this_session_and_the_next(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    with MessagesServer([turn(text("ok")), turn(text("noted")), turn(text("new session"))]) as s:
        agent = agent_on(s, project, home)
        await agent.run("hello")
        path = agent.add_memory("always use pnpm", "project")
        await agent.run("install deps")
        await agent.aclose()
        fresh = agent_on(s, project, home)
        await fresh.run("hi")
        await fresh.aclose()
        bodies = s.requests
    assert path == project / "QUERYLOOP.md"
    assert path.read_text() == "- always use pnpm\n"
    assert "always use pnpm" not in messages_json(bodies[0])
    assert "added this to their memory file" in messages_json(bodies[1])
    # The session's first message is unchanged (prompt cache); a new session reads the file.
    first_block = [b["messages"][0]["content"][0]["text"] for b in bodies[:2]]
    assert first_block[0] == first_block[1]
    assert "always use pnpm" in json.dumps(bodies[2]["messages"][0])


def test_memory_shortcut_and_files(tmp_path: Path) -> None:
    assert parse_memory_shortcut("# use tabs ") == "use tabs"
    assert parse_memory_shortcut("#") is None and parse_memory_shortcut("hi # x") is None
    cwd, home = tmp_path / "p", tmp_path / "h"
    cwd.mkdir()
    assert memory_path(MemoryScope.PROJECT, cwd, home) == cwd / "QUERYLOOP.md"
    (cwd / "AGENTS.md").write_text("# Rules\nno trailing newline")
    assert memory_path("project", cwd, home) == cwd / "AGENTS.md"
    assert memory_path("user", cwd, home) == home / "QUERYLOOP.md"
    add_memory_line("one  two", cwd / "AGENTS.md")
    assert (cwd / "AGENTS.md").read_text() == "# Rules\nno trailing newline\n- one two\n"
    with pytest.raises(ValueError):
        add_memory_line("   ", cwd / "AGENTS.md")
