"""Deny rules hold where programs are executed (issue 31, deliverable 2), run for real.

With `Bash(rm -rf:*)`, `Bash(curl:*)` and `Bash(git push:*)` denied, every attempt below runs
through the real Bash tool with the session's exec check, without the OS sandbox and inside
it. Each is judged by its effect: the folder `x` is still there, no request reached the local
server, the bare remote has no commits. Each was run on the main before the exec check: all
of them ran (the parse of the command line cannot see the program they reach). The benign
look-alikes still run, and each refusal tells the model which rule refused what.
"""

from __future__ import annotations

import http.server
import json
import platform
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_support import agent_on
from conftest import clean_env
from queryloop.permissions import RuleSet
from queryloop.permissions.exec_rules import exec_rules
from queryloop.sandbox import ExecGuard, Sandbox, SandboxPolicy
from queryloop.tasks.manager import TaskManager
from queryloop.testing import MessagesServer, text, tool_use, turn
from queryloop.tools.base import ToolContext, ToolResult
from queryloop.tools.builtin import BashTool
from queryloop.tools.builtin.bash import BashInput

DENY = ("Bash(rm -rf:*)", "Bash(curl:*)", "Bash(git push:*)")

RM_ATTEMPTS = [
    "cp /bin/rm ./zz && ./zz -rf x",
    "ln -s /bin/rm zz && ./zz -rf x",
    "ln /usr/bin/rm zz 2>/dev/null || cp /usr/bin/rm zz; ./zz -rf x",
    "hash -p /bin/rm zz; zz -rf x",
    "shopt -s expand_aliases; alias zz='rm -rf'\nzz x",
    "source /dev/stdin <<< 'rm -rf x'",
    "bash 0<<<'rm -rf x'",
    "sh < <(echo 'rm -rf x')",
    "v='a[$(rm -rf x)]'; echo $((v))",
    "trap -- 'rm -rf x' EXIT",
    "printf 'all:\\n\\trm -rf x\\n' > Makefile && make",
    "P=rm env -S '${P} -rf x'",
    "echo rm -rf x | xargs env",
    "echo x | xargs rm -rf",
    "python3 -c \"import os; os.system('r'+'m -rf x')\"",
    "python3 -c \"import subprocess; subprocess.run(['/bin/r'+'m', '-rf', 'x'])\"",
    'perl -e \'system("r"."m", "-rf", "x")\'',
    "find . -maxdepth 1 -name x -exec r''m -rf {} +",
    "f=$(mktemp -p .); cp /bin/rm $f; $f -rf x",
    "printf '#!/bin/sh\\nrm -rf x\\n' > s.sh; chmod +x s.sh; ./s.sh",
    "printf '#!/usr/bin/env -S rm -rf\\n' > t; chmod +x t; ./t x",
    "cp /bin/rm /tmp/qzz$$; cd /tmp && cd - >/dev/null && /tmp/qzz$$ -rf x",
    "awk 'BEGIN { system(\"rm -rf x\") }'",
    "eval \"$(printf 'r%s -rf x' m)\"",
    "exec -a ls /bin/rm -rf x",
    "python3 -c \"import os; os.execv('/bin/rm', ['ls', '-rf', 'x'])\"",
    "python3 -c \"import os,shutil; shutil.copy('/bin/rm','q'); os.chmod('q',0o755);"
    " fd=os.open('q', os.O_RDONLY); os.execve(fd, ['q','-rf','x'], {})\"",
    "git -c alias.zap='!rm -rf x' zap",
    "cat /bin/rm > zz; echo >> zz; chmod +x zz; ./zz -rf x",
    "cp /bin/rm zz; head -c 4096 /dev/zero >> zz; ./zz -rf x",
    "/lib64/ld-linux-x86-64.so.2 /bin/rm -rf x",
    "cp /lib64/ld-linux-x86-64.so.2 ./L; ./L --argv0 ls --library-path /lib /bin/rm -rf x",
    "exec 3</bin/rm; /proc/self/fd/3 -rf x",
    "exec 3</bin/rm; /proc/thread-self/fd/3 -rf x",
    "ln -sf /proc/self/fd/3 lnk; exec 3</bin/rm; ./lnk -rf x",
    "cd /proc/self/fd && exec 3</bin/rm && cd - >/dev/null && /proc/$$/fd/3 -rf x",
]
CURL_ATTEMPTS = [
    "ln -s /usr/bin/curl c && ./c -s {url}",
    "cp /usr/bin/curl ./k && ./k -s {url}",
    "python3 -c \"import os; os.system('cu'+'rl -s {url}')\"",
    "env -S 'cu''rl -s {url}'",
    "echo {url} | xargs cu''rl -s",
]
GIT_PUSH_ATTEMPTS = [
    "git -c alias.a=push -c alias.b=a b origin HEAD",
    "git send-pack ./remote.git HEAD:refs/heads/main",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.q GIT_CONFIG_VALUE_0=push git q origin HEAD",
    "printf 'all:\\n\\tgit push origin HEAD\\n' > Makefile && make",
]
BENIGN = [
    "rm -r y",
    "ls | head -3",
    "printf 'test:\\n\\techo tested\\n' > Makefile && make test",
    "git checkout -b topic && git checkout -",
    "git status --short | head -3",
    "git fetch origin",
    "python3 -c \"import os; os.system('echo hi')\"",
    "cp /bin/ls ./myls && ./myls",
    "/lib64/ld-linux-x86-64.so.2 /bin/ls",
    "exec 3</bin/ls; /proc/self/fd/3 >/dev/null",
]


class _Counter(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        self.send_response(204)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def counting_server() -> Iterator[type[_Counter]]:
    handler = type("Handler", (_Counter,), {"hits": 0})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.url = f"http://127.0.0.1:{server.server_address[1]}/"  # type: ignore[attr-defined]
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def guard() -> ExecGuard:
    rules = RuleSet.from_strings(deny=DENY, ask=["Bash(wget:*)"])
    found = ExecGuard(lambda command, _cwd: exec_rules(rules, command))
    problem = found.unavailable()
    if problem is not None:
        pytest.skip(f"seccomp user notification is not available here: {problem}")
    return found


@pytest.fixture
def repo(project: Path) -> Path:
    """The project as a git repository with one commit and a bare remote beside it."""
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*git, "init", "-q", "-b", "main", str(project)], check=True)
    (project / "f.txt").write_text("f\n")
    subprocess.run([*git, "-C", str(project), "add", "f.txt"], check=True)
    subprocess.run([*git, "-C", str(project), "commit", "-qm", "one"], check=True)
    # The remote inside the project: a sandboxed command sees only the project (and /usr).
    subprocess.run(["git", "init", "-q", "--bare", str(project / "remote.git")], check=True)
    subprocess.run(["git", "-C", str(project), "remote", "add", "origin", "./remote.git"])
    (project / "x").mkdir()
    (project / "y").mkdir()
    return project


async def run(command: str, ctx: ToolContext) -> ToolResult:
    results = [r async for r in BashTool().call(BashInput(command=command), ctx)]
    result = results[-1]
    assert isinstance(result, ToolResult)
    return result


def sandbox_for(layout: str, bwrap: str | None) -> Sandbox | None:
    if layout == "plain":
        return None
    assert bwrap is not None
    return Sandbox(SandboxPolicy(fail_if_unavailable=True), bwrap=bwrap)


@pytest.fixture(params=["plain", "sandboxed"])
def layout(request: pytest.FixtureRequest) -> str:
    if request.param == "sandboxed":
        request.getfixturevalue("bwrap")
    return str(request.param)


@pytest.mark.parametrize("attempt", RM_ATTEMPTS)
async def test_a_denied_program_is_refused_however_it_is_reached(
    attempt: str, repo: Path, guard: ExecGuard, layout: str
) -> None:
    sandbox = sandbox_for(layout, "bwrap" if layout == "sandboxed" else None)
    ctx = ToolContext(cwd=repo, exec_guard=guard, sandbox=sandbox, env=clean_env())
    result = await run(attempt, ctx)
    assert (repo / "x").is_dir(), result.content
    assert "Bash(rm -rf:*)" in str(result.content)


@pytest.mark.parametrize("attempt", CURL_ATTEMPTS)
async def test_curl_under_another_name_sends_nothing(
    attempt: str, repo: Path, guard: ExecGuard, counting_server: type[_Counter]
) -> None:
    ctx = ToolContext(cwd=repo, exec_guard=guard, env=clean_env())
    url = counting_server.url  # type: ignore[attr-defined]
    result = await run(attempt.format(url=url), ctx)
    assert counting_server.hits == 0, result.content
    assert "Bash(curl:*)" in str(result.content)


@pytest.mark.parametrize("attempt", GIT_PUSH_ATTEMPTS)
async def test_git_push_by_any_route_leaves_the_remote_empty(
    attempt: str, repo: Path, guard: ExecGuard
) -> None:
    ctx = ToolContext(cwd=repo, exec_guard=guard, env=clean_env())
    result = await run(attempt, ctx)
    assert not (repo / "remote.git" / "refs" / "heads" / "main").exists(), result.content
    assert "Bash(git push:*)" in str(result.content)


@pytest.mark.parametrize("command", BENIGN)
async def test_benign_look_alikes_run(
    command: str, repo: Path, guard: ExecGuard, layout: str
) -> None:
    sandbox = sandbox_for(layout, "bwrap" if layout == "sandboxed" else None)
    ctx = ToolContext(cwd=repo, exec_guard=guard, sandbox=sandbox, env=clean_env())
    result = await run(command, ctx)
    assert not result.is_error, result.content
    assert "was not run" not in str(result.content)


async def test_an_ask_rule_refuses_at_exec_time_unless_the_line_was_approved(
    repo: Path, guard: ExecGuard
) -> None:
    ctx = ToolContext(cwd=repo, exec_guard=guard, env=clean_env())
    (repo / "fake").mkdir()
    wget = repo / "fake" / "wget"
    wget.write_text("#!/bin/sh\necho fetched\n")
    wget.chmod(0o755)
    ctx.env["PATH"] = f"{repo / 'fake'}:{ctx.env.get('PATH', '')}"
    hidden = await run("python3 -c \"import os; os.system('wg'+'et x')\"", ctx)
    assert "fetched" not in str(hidden.content)
    assert "ask rule Bash(wget:*)" in str(hidden.content)
    assert "nobody can give in the middle of a command" in str(hidden.content)
    approved = await run("wget x", ctx)  # the person was asked about this very line
    assert "fetched" in str(approved.content)


async def test_a_background_task_is_checked_and_its_refusal_is_in_its_output(
    repo: Path, guard: ExecGuard, tmp_path: Path
) -> None:
    manager = TaskManager(tmp_path / "tasks")
    task = await manager.start_shell(
        "cp /bin/rm zz && ./zz -rf x", cwd=repo, env=clean_env(), guard=guard
    )
    await manager.wait(task.id, 30)
    assert (repo / "x").is_dir()
    assert "Bash(rm -rf:*)" in task.output_path.read_text()


class _SocketServer:
    """A unix stream socket at `path` that records what each connection sent."""

    def __init__(self, path: Path) -> None:
        self.received: list[bytes] = []
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(str(path))
        self._sock.listen(4)
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            with conn:
                self.received.append(conn.recv(100))

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


CONNECT = (
    'python3 -c "import socket; s=socket.socket(socket.AF_UNIX); '
    "s.connect('{path}'); s.send(b'hi')\""
)


@pytest.mark.parametrize("allowed", [False, True])
async def test_a_sandboxed_command_reaches_only_the_unix_sockets_it_is_allowed(
    allowed: bool, project: Path, bwrap: str, guard: ExecGuard
) -> None:
    path = project / "daemon.sock"
    server = _SocketServer(path)
    policy = SandboxPolicy(
        fail_if_unavailable=True, allow_unix_sockets=(str(path),) if allowed else ()
    )
    ctx = ToolContext(
        cwd=project, exec_guard=guard, sandbox=Sandbox(policy, bwrap=bwrap), env=clean_env()
    )
    try:
        result = await run(CONNECT.format(path=path), ctx)
        datagram = await run(
            'python3 -c "import socket; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)"', ctx
        )
    finally:
        server.close()
    if allowed:
        assert server.received == [b"hi"], result.content
    else:
        assert server.received == [], result.content
        assert "allowUnixSockets" in str(result.content)
    assert datagram.is_error and "Operation not permitted" in str(datagram.content)


async def test_without_the_sandbox_unix_sockets_are_not_checked(
    project: Path, guard: ExecGuard
) -> None:
    path = project / "daemon.sock"
    server = _SocketServer(path)
    try:
        await run(
            CONNECT.format(path=path), ToolContext(cwd=project, exec_guard=guard, env=clean_env())
        )
    finally:
        server.close()
    assert server.received == [b"hi"]


@pytest.mark.parametrize(
    ("mode", "settings_dir"), [("bypassPermissions", ".claude"), ("default", ".queryloop")]
)
async def test_the_agent_refuses_a_copied_program_with_the_projects_rules(
    mode: str, settings_dir: str, project: Path, guard: ExecGuard
) -> None:
    """Through the real Agent, the deny rule in the project's own settings file (where users
    put it), in bypassPermissions and in default mode under `Bash(*)`."""
    rules = {"permissions": {"deny": ["Bash(rm -rf:*)"], "allow": ["Bash(*)"]}}
    (project / settings_dir).mkdir()
    (project / settings_dir / "settings.json").write_text(json.dumps(rules))
    (project / "x").mkdir()
    script = [
        turn(tool_use("Bash", {"command": "cp /bin/rm ./zz && ./zz -rf x"})),
        turn(text("done")),
    ]
    with MessagesServer(script) as server:
        async with agent_on(
            server,
            project,
            trust=True,
            permission_mode=mode,
        ) as agent:
            await agent.run("clean up")
        seen = json.dumps(server.requests[-1]["messages"][-1])
    assert (project / "x").is_dir()
    assert "Bash(rm -rf:*)" in seen and "was not run" in seen


async def test_a_command_cannot_take_the_exec_notifications_for_itself(
    repo: Path, guard: ExecGuard
) -> None:
    """A filter of the command's own with a listener that lets every exec run would get the
    notifications first; the kernel refuses it (one listener per process tree)."""
    if platform.machine() != "x86_64":
        pytest.skip("the attack's filter is written for x86_64's system call numbers")
    script = Path(__file__).with_name("steal_listener.py")
    ctx = ToolContext(cwd=repo, exec_guard=guard, env=clean_env())
    result = await run(f"python3 {script}", ctx)
    assert (repo / "x").is_dir(), result.content
    assert "listener -1 16" in str(result.content)  # EBUSY
