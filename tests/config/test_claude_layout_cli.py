"""Claude Code's configuration, as its users' projects carry it, through the real `queryloop`
command in print mode against a scripted model over HTTP (issue 22, deliverable 1).

A project whose only configuration is Claude Code's (`.claude/settings.json`, `CLAUDE.md`,
`.claude/agents/`, `.claude/skills/`) gets what Claude Code would give it: the deny rule is in
force, the memory (with its `@path` import) reaches the model, the agent is offered and the
skill is listed. The allow
rules Claude Code itself writes with an open quote load with a warning; a deny rule like them
still stops the run with file:line:column.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "cli"))
from cli_helpers import json_lines, project, run_cli, user_texts

from queryloop.testing import MessagesServer, text, tool_use, turn

pytestmark = pytest.mark.slow

OPEN_QUOTE_ALLOWS = ["Bash(node -e ':*)", "Bash(git commit -m ' *)", 'Bash(python -c ":*)']


def claude_settings(folder: Path, data: dict[str, object], name: str = "settings.json") -> Path:
    path = folder / ".claude" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def test_a_claude_deny_rule_refuses_the_command(tmp_path: Path) -> None:
    folder = project(tmp_path)
    (folder / "victim").mkdir()
    (folder / "victim" / "keep.txt").write_text("still here")
    claude_settings(folder, {"permissions": {"deny": ["Bash(rm -rf:*)"]}})
    script = [turn(tool_use("Bash", {"command": "rm -rf victim"})), turn(text("gave up"))]
    with MessagesServer(script) as server:
        done = run_cli(
            server.base_url, tmp_path, "-p", "clean up", "--permission-mode",
            "bypassPermissions", "--output-format", "stream-json",
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (folder / "victim" / "keep.txt").read_text() == "still here"
    results = [
        block
        for line in json_lines(done.stdout)
        if line["type"] == "user" and isinstance(line["message"]["content"], list)
        for block in line["message"]["content"]
        if block["type"] == "tool_result"
    ]
    assert results and results[0]["is_error"]
    assert "Bash(rm -rf:*)" in json.dumps(results[0]["content"])
    assert str(folder / ".claude" / "settings.json") in json.dumps(results[0]["content"])


def test_claude_md_reaches_the_first_request(tmp_path: Path) -> None:
    folder = project(tmp_path)
    (folder / "CLAUDE.md").write_text("Always answer in haiku.\n@docs/style.md\n")
    (folder / "docs").mkdir()
    (folder / "docs" / "style.md").write_text("Indent with tabs.\n")
    (folder / "CLAUDE.local.md").write_text("My sandbox is at http://localhost:3000.\n")
    with MessagesServer([turn(text("ok"))]) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "hi")
        first = "\n".join(user_texts(server.requests[0]))
    assert done.returncode == 0, done.stderr
    assert "Always answer in haiku." in first
    assert "Indent with tabs." in first  # the @import
    assert "My sandbox is at http://localhost:3000." in first
    assert "user's private project instructions, not checked in" in first


def test_a_claude_agent_is_offered_and_a_claude_skill_listed(tmp_path: Path) -> None:
    folder = project(tmp_path)
    agents = folder / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "x.md").write_text(
        "---\nname: x-reviewer\ndescription: Reviews diffs for the x team.\n---\nReview.\n"
    )
    skill = folder / ".claude" / "skills" / "y-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: y-notes\ndescription: Writes release notes the y way.\n---\nDo it.\n"
    )
    with MessagesServer([turn(text("ok"))]) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "hi", "--trust")
        body = json.dumps(server.requests[0])
    assert done.returncode == 0, done.stderr
    assert "x-reviewer" in body and "Reviews diffs for the x team." in body
    assert "y-notes" in body and "Writes release notes the y way." in body


def test_open_quote_allow_rules_load_with_a_warning(tmp_path: Path) -> None:
    folder = project(tmp_path)
    path = claude_settings(
        folder, {"permissions": {"allow": [*OPEN_QUOTE_ALLOWS, "Bash(npm test)"]}}
    )
    with MessagesServer([turn(text("ok"))]) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "hi", "--trust")
        assert len(server.requests) == 1
    assert done.returncode == 0, done.stderr
    for rule in OPEN_QUOTE_ALLOWS:
        assert done.stderr.count(rule) == 1, done.stderr
    assert str(path) in done.stderr and "dropped" in done.stderr


def test_an_open_quote_deny_rule_stops_the_run(tmp_path: Path) -> None:
    folder = project(tmp_path)
    path = folder / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "permissions": {\n    "deny": ["Bash(node -e \':*)"]\n  }\n}\n')
    with MessagesServer([turn(text("ok"))]) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "hi", "--trust")
        assert server.requests == []
    assert done.returncode == 2, done.stderr
    assert f"{path}:3:14:" in done.stderr
