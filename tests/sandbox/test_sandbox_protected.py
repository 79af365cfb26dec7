"""Protected paths and the deny rules for Read and Edit, by effect, in the real sandbox the
session builds (`agent.assembly_guards.build_sandbox`, issue 31): a program the command-line
analysis cannot read still cannot write git's config, hooks or commondir, the settings, the
memory files or `.mcp.json`, nor read what `Read(...)` denies or write what `Edit(...)`
denies. Everyday git still works in the sandbox."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import clean_env
from queryloop.agent.assembly_guards import build_sandbox
from queryloop.agent.options import AgentOptions, WorkspaceOptions
from queryloop.agent.runtime import Notices
from queryloop.config.workspace import load_workspace
from queryloop.sandbox import Sandbox
from queryloop.tools.builtin._shell import ShellOutcome, run_shell

pytestmark = pytest.mark.usefixtures("bwrap")

PYTHON = shlex.quote(os.path.realpath(sys.executable))
GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
}
SETTINGS = {
    "sandbox": {"enabled": True, "failIfUnavailable": True},
    "permissions": {"deny": ["Read(./.env)", "Edit(secrets/**)", "Read(**/*.pem)"]},
}


def hidden_write(path: str) -> str:
    """A command writing `path` that no parse can read (the path travels in hex)."""
    code = "import sys; p = bytes.fromhex(sys.argv[1]).decode(); open(p, 'w').write('x')"
    return f"{PYTHON} -c {shlex.quote(code)} {path.encode().hex()}"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, env=clean_env(**GIT_ENV)
    )


@pytest.fixture
def repo(project: Path) -> Path:
    """A project with a git repository, a committed file, settings turning the sandbox on
    with deny rules, memory files, `.mcp.json`, a secret and a denied folder."""
    git(project, "init", "-q", "-b", "main")
    (project / "a.txt").write_text("a\n")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(SETTINGS))
    (project / "CLAUDE.md").write_text("# memory")
    (project / ".mcp.json").write_text('{"mcpServers": {}}')
    (project / ".env").write_text("TOKEN=SECRET-1234")
    (project / "keys").mkdir()
    (project / "keys" / "server.pem").write_text("SECRET-PEM")
    (project / "secrets").mkdir()
    (project / "secrets" / "key.txt").write_text("kept")
    (project / ".gitignore").write_text(".env\nkeys/\nsecrets/\n")
    git(project, "add", ".")
    git(project, "commit", "-qm", "init")
    return project


@pytest.fixture
def sandbox(repo: Path, tmp_path: Path) -> Iterator[Sandbox]:
    """The session's sandbox, as `Agent` builds it for `repo`."""
    home = tmp_path / "home"
    home.mkdir()
    workspace = load_workspace(repo, user_home=home, trust_override=True)
    built = build_sandbox(
        AgentOptions(workspace=WorkspaceOptions(cwd=repo)), workspace, home, Notices()
    )
    assert built is not None
    yield built


async def sh(sandbox: Sandbox, command: str, cwd: Path) -> ShellOutcome:
    env = clean_env(**GIT_ENV)
    return await run_shell(command, cwd, env, 60, sandbox=sandbox, working_dirs=[cwd])


def _state(path: Path) -> bytes | list[str] | None:
    if path.is_dir():
        return sorted(p.name for p in path.iterdir())
    return path.read_bytes() if path.exists() else None


TARGETS = [
    ".git/config",
    ".git/commondir",
    ".git/hooks/pre-commit",
    ".git/info/attributes",
    ".git/config.worktree",
    ".git/objects/info/alternates",
    ".git/description",
    ".claude/settings.json",
    ".claude/settings.local.json",
    "CLAUDE.md",
    "AGENTS.md",
    ".mcp.json",
    ".gitmodules",
    "secrets/key.txt",
    "secrets/new.txt",
]


@pytest.mark.parametrize("target", TARGETS)
async def test_a_hidden_write_to_a_protected_path_fails(
    repo: Path, sandbox: Sandbox, target: str
) -> None:
    before = _state(repo / target)
    got = await sh(sandbox, hidden_write(target), repo)
    assert got.exit_code != 0, (target, got.stdout)
    assert _state(repo / target) == before
    assert _state(repo / ".git") is not None and (repo / ".git" / "HEAD").is_file()


async def test_a_missing_memory_file_and_mcp_json_cannot_be_created(
    repo: Path, sandbox: Sandbox
) -> None:
    (repo / "CLAUDE.md").unlink()
    (repo / ".mcp.json").unlink()
    for target in ("CLAUDE.md", ".mcp.json", ".claude/CLAUDE.md", ".git/commondir"):
        got = await sh(sandbox, hidden_write(target), repo)
        assert got.exit_code != 0, target
    await sh(sandbox, "true", repo)  # the stand-ins go when no command runs
    assert not (repo / "CLAUDE.md").exists() and not (repo / ".mcp.json").exists()
    assert not (repo / ".git" / "commondir").exists()


async def test_commondir_cannot_lead_git_to_another_config(repo: Path, sandbox: Sandbox) -> None:
    """The issue's attack: a config whose fsmonitor runs, and `.git/commondir` naming it."""
    evil = repo / "evil"
    attack = (
        f"mkdir -p evil && printf '[core]\\n\\tfsmonitor = touch {repo}/pwned\\n' > evil/config"
        " && cp -r .git/objects .git/refs .git/HEAD evil/ ; " + hidden_write(".git/commondir")
    )
    got = await sh(sandbox, attack, repo)
    assert got.exit_code != 0 and (evil / "config").exists()
    assert not (repo / ".git" / "commondir").exists()
    git(repo, "status")  # outside the sandbox, as the user would
    assert not (repo / "pwned").exists()


async def test_read_deny_rules_hide_the_files_from_every_program(
    repo: Path, sandbox: Sandbox
) -> None:
    read = f"{PYTHON} -c \"print(open('.e'+'nv').read())\"; cat keys/server.pem; echo done"
    got = await sh(sandbox, read, repo)
    assert "SECRET" not in got.stdout and "done" in got.stdout
    assert (repo / ".env").read_text() == "TOKEN=SECRET-1234"


async def test_everyday_git_works_in_the_sandbox(repo: Path, sandbox: Sandbox) -> None:
    remote = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="ql-remote-")) / "r.git"
    try:
        git(repo, "clone", "-q", "--bare", str(repo), str(remote))
        git(remote, "--git-dir", str(remote), "branch", "-q", "upstream", "main")
        script = [
            "echo b > b.txt && git add . && git commit -qm two",
            "git checkout -q -b topic && echo c > c.txt && git add c.txt && git commit -qm three",
            "echo d >> a.txt && git stash -q && git stash pop -q && git commit -qam four",
            f"git fetch -q {remote} upstream && git checkout -q main && git merge -q --no-ff"
            " --no-edit topic && git merge -q FETCH_HEAD",
            "git log --oneline | wc -l && git status --short && echo ok",
        ]
        for command in script:
            got = await sh(sandbox, command, repo)
            assert got.exit_code == 0, (command, got.stdout, got.stderr)
        assert got.stdout.split() == ["5", "ok"]
        git(repo, "fsck", "--no-progress")
    finally:
        shutil.rmtree(remote.parent, ignore_errors=True)
