"""The sandbox starts wherever it is turned on (issue 31): `queryloop -p` against a scripted
model, the setting in each scope a user puts it in (the project's `.claude/` or `.queryloop/`,
the user's, Claude Code's user folder, the managed file), in a project with and without the
protected files. In each, a command runs and a protected file stays as it was."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, tool_results
from queryloop.testing import MessagesServer, text, tool_use, turn

pytestmark = pytest.mark.usefixtures("bwrap")

ON = {"sandbox": {"enabled": True, "failIfUnavailable": True}}
SCOPES = ("claude-project", "queryloop-project", "user", "claude-user", "managed")
WRITE = (
    "import sys; p = bytes.fromhex(sys.argv[1]).decode(); open(p, 'w').write('x');"
    " print('wro' + 'te')"
)
"""Writes the path its argument spells in hex: no name the command-line analysis could read."""


def write_attack(path: str) -> str:
    """A Bash command writing `path` (relative to the project) in a way no parse can see."""
    python = shlex.quote(os.path.realpath(sys.executable))
    return f"{python} -c {shlex.quote(WRITE)} {path.encode().hex()}"


def _settings_file(scope: str, project: Path, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Where `scope` keeps its settings file, and the environment that points there."""
    match scope:
        case "claude-project":
            return project / ".claude" / "settings.json", {}
        case "queryloop-project":
            return project / ".queryloop" / "settings.json", {}
        case "user":
            return tmp_path / "home" / "settings.json", {}
        case "claude-user":
            folder = tmp_path / "claude-user"
            return folder / "settings.json", {"CLAUDE_CONFIG_DIR": str(folder)}
        case _:
            managed = tmp_path / "managed" / "managed-settings.json"
            return managed, {"QUERYLOOP_MANAGED_SETTINGS": str(managed)}


def _write_protected_files(project: Path) -> dict[Path, str]:
    """Every kind of protected file a project holds, with their contents."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    files = {
        project / "CLAUDE.md": "# memory",
        project / "AGENTS.md": "# agents",
        project / ".mcp.json": '{"mcpServers": {}}',
        project / ".claude" / "CLAUDE.md": "# claude memory",
        project / ".claude" / "settings.local.json": "{}",
        project / ".claude" / "agents" / "a.md": "agent",
        project / ".queryloop" / "QUERYLOOP.md": "# queryloop memory",
        project / ".queryloop" / "skills" / "s" / "SKILL.md": "skill",
    }
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return files


def _snapshot(project: Path) -> dict[str, bytes | None]:
    names = (
        "CLAUDE.md", ".mcp.json", ".claude/settings.json", ".claude/CLAUDE.md",
        ".queryloop/settings.json", ".queryloop/QUERYLOOP.md", ".git/config",
    )  # fmt: skip
    return {n: (project / n).read_bytes() if (project / n).is_file() else None for n in names}


@pytest.mark.parametrize("files", [True, False], ids=["protected-files", "bare-project"])
@pytest.mark.parametrize("scope", SCOPES)
def test_a_command_runs_and_protected_files_stay(
    project: Path, tmp_path: Path, scope: str, files: bool
) -> None:
    (tmp_path / "home").mkdir()
    if files:
        _write_protected_files(project)
    settings, env = _settings_file(scope, project, tmp_path)
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(ON))
    before = _snapshot(project)
    targets = ["CLAUDE.md", ".claude/settings.json", ".claude/CLAUDE.md"]
    attacks = [*targets, ".queryloop/QUERYLOOP.md", ".mcp.json", ".git/config"]
    script = [
        turn(tool_use("Bash", {"command": "echo ran > out.txt && echo finished"})),
        *[turn(tool_use("Bash", {"command": write_attack(a)})) for a in attacks],
        turn(text("Done.")),
    ]
    with MessagesServer(script) as server:
        done = run_cli(
            server.base_url, tmp_path, project, "-p", "go", "--allowed-tools", "Bash", **env
        )
    assert done.returncode == 0, done.stderr
    results = [tool_results(server.requests[i])[-1] for i in range(1, len(script))]
    assert "finished" in results[0] and "bwrap" not in results[0], results[0]
    assert (project / "out.txt").read_text() == "ran\n"
    assert all("Errno" in r and "wrote" not in r for r in results[1:]), results
    assert _snapshot(project) == before
    # the stand-ins bwrap made for missing paths are gone once no command runs
    made = {p.name for p in project.iterdir()} - {"out.txt", ".git", ".claude", ".queryloop"}
    assert made == ({"CLAUDE.md", "AGENTS.md", ".mcp.json"} if files else set())
