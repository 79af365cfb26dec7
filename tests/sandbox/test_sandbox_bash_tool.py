"""The Bash tool and the CLI with the sandbox on: the tool context carries it, the CLI
builds it from the settings."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, tool_results
from queryloop.sandbox import Sandbox, SandboxPolicy
from queryloop.tasks import TaskManager
from queryloop.testing import MessagesServer, text, tool_use, turn
from queryloop.tools import ToolContext
from queryloop.tools.builtin import BashTool

sys.path.insert(0, str(Path(__file__).parent.parent / "tools"))
from tools_test_support import call


@pytest.mark.usefixtures("bwrap")
async def test_the_bash_tool_runs_in_the_context_sandbox(project: Path, tmp_path: Path) -> None:
    (tmp_path / "sibling").mkdir()
    tasks = TaskManager(tmp_path / "tasks")
    ctx = ToolContext(cwd=project, sandbox=Sandbox(SandboxPolicy()), tasks=tasks)
    got = await call(
        BashTool(), {"command": f"echo in > in.txt; echo out > {tmp_path}/sibling/out.txt"}, ctx
    )
    assert got.is_error and "No such file or directory" in got.text
    assert (project / "in.txt").exists() and not (tmp_path / "sibling" / "out.txt").exists()
    background = await call(
        BashTool(),
        {"command": f"echo bg > {tmp_path}/sibling/bg.txt", "run_in_background": True},
        ctx,
    )
    assert not background.is_error
    (task,) = tasks.all()
    await tasks.wait(task.id, 30)
    assert "No such file or directory" in task.output()
    assert not (tmp_path / "sibling" / "bg.txt").exists()
    await tasks.aclose()


async def test_a_required_sandbox_that_cannot_start_is_an_error_the_model_reads(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    ctx = ToolContext(cwd=project, sandbox=Sandbox(SandboxPolicy(fail_if_unavailable=True)))
    got = await call(BashTool(), {"command": "echo ran > ran.txt"}, ctx)
    assert got.is_error and "The Bash sandbox cannot start" in got.text
    assert "apt-get install bubblewrap" in got.text and not (project / "ran.txt").exists()


@pytest.mark.usefixtures("bwrap")
def test_print_mode_with_the_sandbox_enabled_in_settings(project: Path, tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "settings.json").write_text(
        json.dumps({"sandbox": {"enabled": True, "failIfUnavailable": True}})
    )
    (tmp_path / "sibling").mkdir()
    command = f"echo in > in.txt; echo out > {tmp_path}/sibling/out.txt; echo finished"
    script = [turn(tool_use("Bash", {"command": command})), turn(text("Done."))]
    with MessagesServer(script) as server:
        done = run_cli(server.base_url, tmp_path, project, "-p", "go", "--allowed-tools", "Bash")
        assert all(v == [] for v in server.violations)
    assert done.returncode == 0, done.stderr
    assert (project / "in.txt").read_text() == "in\n"
    assert not (tmp_path / "sibling" / "out.txt").exists()
    result = tool_results(server.requests[1])[-1]
    assert "finished" in result and "No such file or directory" in result


def test_print_mode_warns_once_when_the_sandbox_cannot_start(project: Path, tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sh"):
        (bin_dir / tool).symlink_to(f"/bin/{tool}")
    script = [
        turn(tool_use("Bash", {"command": "echo one > one.txt"})),
        turn(tool_use("Bash", {"command": "echo two > two.txt"})),
        turn(text("Done.")),
    ]
    with MessagesServer(script) as server:
        done = run_cli(
            server.base_url, tmp_path, project, "-p", "go", "--allowed-tools", "Bash",
            PATH=str(bin_dir),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (project / "one.txt").exists() and (project / "two.txt").exists()
    assert done.stderr.count("cannot start") == 1, done.stderr
    assert "UNSANDBOXED" in done.stderr and "apt-get install bubblewrap" in done.stderr


def test_a_subagents_context_keeps_the_sandbox(project: Path) -> None:
    from queryloop.abort import AbortSignal
    from queryloop.agents.runner import child_context

    parent = ToolContext(cwd=project, sandbox=Sandbox(SandboxPolicy()))
    assert child_context(parent, AbortSignal()).sandbox is parent.sandbox


@pytest.mark.usefixtures("bwrap")
def test_auto_allow_runs_sandboxed_commands_unasked_but_not_excluded_or_denied_ones(
    project: Path, tmp_path: Path
) -> None:
    """Headless there is nobody to ask: a command that would ask is refused, unless it runs
    sandboxed and autoAllowBashIfSandboxed is on (the default once a trusted file turns the
    sandbox on). Excluded commands ask as before; deny rules still win."""
    (tmp_path / "home").mkdir()
    settings = {
        "sandbox": {"enabled": True, "excludedCommands": ["touch"]},
        "permissions": {"deny": ["Bash(rm:*)"]},
    }
    (tmp_path / "home" / "settings.json").write_text(json.dumps(settings))
    (project / "keep.txt").write_text("keep")
    script = [
        turn(tool_use("Bash", {"command": "echo sandboxed > made.txt"})),
        turn(tool_use("Bash", {"command": "touch excluded.txt"})),
        turn(tool_use("Bash", {"command": "rm keep.txt"})),
        turn(text("Done.")),
    ]
    with MessagesServer(script) as server:
        done = run_cli(server.base_url, tmp_path, project, "-p", "go", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    assert (project / "made.txt").read_text() == "sandboxed\n"
    assert not (project / "excluded.txt").exists()
    assert (project / "keep.txt").exists()
    denials = [d["tool_input"]["command"] for d in json.loads(done.stdout)["permission_denials"]]
    assert denials == ["touch excluded.txt", "rm keep.txt"]


@pytest.mark.usefixtures("bwrap")
def test_the_sessions_protected_paths_are_read_only_and_git_still_commits(
    project: Path, tmp_path: Path
) -> None:
    """The protected paths of the session (permissions.protected) are mounted read-only; the
    git folder only as far as its hooks and config, so a sandboxed commit still works."""
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "a.txt").write_text("a")
    commit = (
        "git add a.txt && git -c user.name=t -c user.email=t@t commit -qm one && echo committed"
    )
    # what the command-line analysis cannot see: the paths are built inside the program
    write = "import sys; p = ''.join(sys.argv[1:]); open(p, 'w').write('x'); print('wrote', p)"
    python = shlex.quote(os.path.realpath(sys.executable))
    attacks = [
        f"{python} -c {shlex.quote(write)} .g it/hoo ks/pre-commit",
        f"{python} -c {shlex.quote(write)} .g it/con fig",
        f"{python} -c {shlex.quote(write)} .cla ude",
        f"{python} -c {shlex.quote(write)} AGE NTS.md",
    ]
    script = [
        turn(tool_use("Bash", {"command": commit})),
        *[turn(tool_use("Bash", {"command": a})) for a in attacks],
        turn(text("Done.")),
    ]
    with MessagesServer(script) as server:
        done = run_cli(server.base_url, tmp_path, project, "-p", "go", "--allowed-tools", "Bash")
    assert done.returncode == 0, done.stderr
    results = [tool_results(server.requests[i])[-1] for i in range(1, len(script))]
    assert "committed" in results[0]
    assert all("Read-only file system" in r or "Is a directory" in r for r in results[1:]), results
    assert not any("wrote" in r for r in results[1:])
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert (project / ".git" / "config").read_text() != "x"
    assert not (project / ".claude").exists() and not (project / "AGENTS.md").exists()
