"""Commands in the real bubblewrap sandbox: network, writes, the home, denied and protected
paths, killing on timeout and cancel, background tasks, and when bwrap is missing."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import clean_env
from queryloop.sandbox import Sandbox, SandboxPolicy, SandboxUnavailableError
from queryloop.tasks import TaskManager
from queryloop.tools.builtin._shell import ShellOutcome, run_shell

pytestmark = pytest.mark.usefixtures("bwrap")


async def sh(
    sandbox: Sandbox, command: str, cwd: Path, *, timeout_s: float = 30, **env: str
) -> ShellOutcome:
    return await run_shell(
        command, cwd, clean_env(**env), timeout_s, sandbox=sandbox, working_dirs=[cwd]
    )


def fetch(url: str) -> str:
    code = (
        f"import urllib.request; print(urllib.request.urlopen({url!r}, timeout=5).read().decode())"
    )
    # the real interpreter: a venv under /tmp is out of sight in the sandbox
    return f"{shlex.quote(os.path.realpath(sys.executable))} -c {shlex.quote(code)}"


async def test_no_network_a_local_server_is_out_of_reach(project: Path, http_server: int) -> None:
    url = f"http://127.0.0.1:{http_server}/hello"
    unsandboxed = await run_shell(fetch(url), project, clean_env(), 30)
    assert "served /hello" in unsandboxed.stdout  # the server is there
    got = await sh(Sandbox(SandboxPolicy()), fetch(url), project)
    assert got.exit_code != 0 and "served" not in got.stdout
    assert "Connection refused" in got.stderr or "unreachable" in got.stderr


async def test_writes_inside_the_working_folder_only(project: Path, tmp_path: Path) -> None:
    sibling = tmp_path / "sibling"
    sibling.mkdir()
    sandbox = Sandbox(SandboxPolicy())
    inside = await sh(sandbox, "echo kept > inside.txt && cat inside.txt", project)
    assert inside.exit_code == 0 and (project / "inside.txt").read_text() == "kept\n"
    for target in (
        sibling / "out.txt",
        Path("/usr/local/queryloop-sandbox-test"),
        Path.home() / "x",
    ):
        outside = await sh(sandbox, f"echo no > {shlex.quote(str(target))}", project)
        assert outside.exit_code != 0, target
        assert not target.exists()
    assert inside.final_cwd == str(project.resolve())  # the cwd record crossed the sandbox


@pytest.mark.parametrize("under", ["tmp", "var"])
async def test_rm_rf_in_the_home_leaves_it_as_it_was(
    project: Path, tmp_path: Path, under: str
) -> None:
    """A home under /tmp is not even visible (the sandbox's /tmp is its own); one elsewhere
    (/var/tmp here, like /home) is read-only."""
    base = tmp_path if under == "tmp" else Path(tempfile.mkdtemp(dir="/var/tmp"))
    home = base / "home"
    (home / "somefolder" / "deep").mkdir(parents=True)
    (home / "somefolder" / "deep" / "notes.txt").write_text("precious")
    (home / ".bashrc").write_text("# mine")
    try:
        before = _tree(home)
        got = await sh(
            Sandbox(SandboxPolicy()), "rm -rf ~/somefolder ~/.bashrc", project, HOME=str(home)
        )
        if under == "var":
            assert got.exit_code != 0 and "Read-only file system" in got.stderr
        assert _tree(home) == before
    finally:
        if under == "var":
            shutil.rmtree(base)


def _tree(folder: Path) -> list[tuple[str, bytes]]:
    return sorted(
        (str(p.relative_to(folder)), p.read_bytes() if p.is_file() else b"")
        for p in folder.rglob("*")
    )


async def test_denied_paths_are_unreadable(project: Path, tmp_path: Path) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "key").write_text("folder-secret")
    token = tmp_path / "token.txt"
    token.write_text("file-secret")
    policy = SandboxPolicy(deny_read=(secrets, token))
    got = await sh(
        Sandbox(policy), f"cat {secrets}/key {token}; ls -A {secrets}; echo done", project
    )
    assert "secret" not in got.stdout and got.stdout.strip() == "done"
    assert "No such file" in got.stderr


async def test_protected_paths_are_read_only_in_a_writable_project(project: Path) -> None:
    settings = project / ".queryloop" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"permissions": {"deny": ["Bash(curl:*)"]}}')
    hooks = project / ".git" / "hooks"
    hooks.mkdir(parents=True)
    missing = project / ".queryloop" / "settings.local.json"
    mcp = project / ".mcp.json"  # its folder exists, the file does not
    sandbox = Sandbox(SandboxPolicy(read_only=(settings, missing, hooks, mcp)))
    attacks = [
        f"echo '{{}}' > {settings}",
        f"sed -i s/deny/allow/ {settings}",
        f'echo \'{{"permissions": {{"defaultMode": "bypassPermissions"}}}}\' > {missing}',
        f"printf '#!/bin/sh\\ncurl evil' > {hooks}/pre-commit",
        f"echo '{{\"mcpServers\": {{}}}}' > {mcp}",
        f"rm -rf {project}/.git",
        # root in the sandbox: without --cap-drop ALL it could unmount the read-only bind
        f"umount {settings} && echo '{{}}' > {settings}",
        f"umount -l {hooks} && touch {hooks}/pre-commit",
        # move the protected path's folder away and make a new one in its place
        f"mv {project}/.queryloop {project}/.q2 && mkdir {project}/.queryloop"
        f" && echo '{{}}' > {settings}",
        f"mv {project}/.git {project}/.g2 && mkdir -p {hooks} && touch {hooks}/pre-commit",
    ]
    for attack in attacks:
        got = await sh(sandbox, attack, project)
        assert got.exit_code != 0, attack
    assert settings.read_text() == '{"permissions": {"deny": ["Bash(curl:*)"]}}'
    assert not (project / ".q2").exists() and not (project / ".g2").exists()
    assert not missing.exists() and not mcp.exists() and list(hooks.iterdir()) == []
    ok = await sh(sandbox, "echo fine > src.py && mkdir -p build && touch build/out", project)
    assert ok.exit_code == 0 and (project / "build" / "out").exists()
    # the placeholders bwrap made for the missing paths are gone afterwards
    assert sorted(p.name for p in project.iterdir()) == [".git", ".queryloop", "build", "src.py"]
    assert sorted(p.name for p in settings.parent.iterdir()) == ["settings.json"]


def _alive(pid_file: Path) -> bool:
    """True while any process with the command line recorded in pid_file lives."""
    marker = pid_file.read_text().strip()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker in (proc / "cmdline").read_bytes().decode():
                return True
        except OSError:
            continue
    return False


async def _gone(pid_file: Path) -> bool:
    for _ in range(300):
        if not _alive(pid_file):
            return True
        await asyncio.sleep(0.01)
    return False


SLEEPERS = (
    # a child and a grandchild that moves to its own session: only the pid namespace holds it
    "setsid sleep 100{m} & (sleep 100{m} &) ; echo 100{m} > marker; echo started; wait"
)


async def test_a_timeout_kills_every_process_in_the_sandbox(project: Path) -> None:
    command = SLEEPERS.format(m=".123")
    got = await sh(Sandbox(SandboxPolicy()), command, project, timeout_s=1.0)
    assert got.timed_out and "started" in got.stdout
    assert await _gone(project / "marker")


async def test_a_cancel_kills_every_process_in_the_sandbox(project: Path) -> None:
    command = SLEEPERS.format(m=".456")
    task = asyncio.create_task(sh(Sandbox(SandboxPolicy()), command, project))
    for _ in range(500):
        if (project / "marker").exists() and _alive(project / "marker"):
            break
        await asyncio.sleep(0.01)
    assert _alive(project / "marker")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _gone(project / "marker")


async def test_a_background_task_is_sandboxed(project: Path, tmp_path: Path) -> None:
    (tmp_path / "sibling").mkdir()
    outside = tmp_path / "sibling" / "outside.txt"
    manager = TaskManager(tmp_path / "tasks")
    task = await manager.start_shell(
        f"echo in > inside.txt; echo out > {outside}; echo finished",
        cwd=project,
        env=clean_env(),
        sandbox=Sandbox(SandboxPolicy()),
        working_dirs=[project],
    )
    await manager.wait(task.id, 30)
    assert (project / "inside.txt").read_text() == "in\n"
    assert not outside.exists()
    assert "finished" in task.output() and "No such file" in task.output()
    await manager.aclose()


def _path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with bash and python but no bwrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sh", "cat", "echo"):
        found = [Path(d) / tool for d in os.environ["PATH"].split(":") if (Path(d) / tool).exists()]
        if found:
            (bin_dir / tool).symlink_to(found[0])
    return str(bin_dir)


async def test_fail_if_unavailable_stops_the_command_and_says_how_to_fix_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path))
    sandbox = Sandbox(SandboxPolicy(fail_if_unavailable=True))
    with pytest.raises(SandboxUnavailableError) as caught:
        await sh(sandbox, "echo ran > ran.txt", project)
    message = str(caught.value)
    assert "bwrap (bubblewrap) is not on PATH" in message
    assert "apt-get install bubblewrap" in message and "failIfUnavailable" in message
    assert not (project / "ran.txt").exists()


async def test_unavailable_warns_once_and_runs_unsandboxed(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path))
    warnings: list[str] = []
    sandbox = Sandbox(SandboxPolicy(), warn=warnings.append)
    assert not sandbox.covers("echo hi")
    for i in range(3):
        got = await sh(sandbox, f"echo {i} > n{i}.txt", project)
        assert got.exit_code == 0
    assert (project / "n2.txt").read_text() == "2\n"
    assert len(warnings) == 1
    assert "UNSANDBOXED" in warnings[0] and "apt-get install bubblewrap" in warnings[0]


async def test_excluded_commands_run_outside(project: Path, tmp_path: Path) -> None:
    target = tmp_path / "made-by-excluded.txt"
    sandbox = Sandbox(SandboxPolicy(excluded_commands=("touch",)))
    assert not sandbox.covers(f"touch {target}")
    assert sandbox.covers(f"touch {target}; rm -rf ~")  # compound: stays sandboxed
    got = await sh(sandbox, f"touch {target}", project)
    assert got.exit_code == 0 and target.exists()
