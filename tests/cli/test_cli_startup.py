"""Start-up and exit of the real `queryloop` command: what waits for what.

No test here asserts how fast anything is (the machine is loaded; bench/cli_startup.py keeps
the numbers). They assert order and structure instead: an MCP server finishes its handshake
while the model SDK is still importing (the SDK is made slow on purpose by slow_sdk/), the
REPL's prompt is drawn before that import ends and before the session has started (a
SessionStart hook holds it), a line typed then is sent once it is ready, and the exit does
not sit out the MCP SDK's shutdown timeouts, leaving no server process behind.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest
from cli_helpers import COMMAND, cli_env, project
from pty_support import ReplChild

from queryloop.cli import main as cli_main
from queryloop.testing import MessagesServer, text, turn

SLOW_SDK = Path(__file__).parent / "slow_sdk"
STARTUP_WATCH = Path(__file__).parent / "startup_watch"
RAW_SERVER = Path(__file__).parents[1] / "mcp" / "servers" / "raw_lookup_server.py"
SDK_WAITS_S = 4.0
"""What the MCP SDK's stdio shutdown would wait for a server that ignores EOF and SIGTERM
(2 s for it to exit, 2 s after SIGTERM); ours are 0.1 s and 0.5 s."""


def slow_sdk_env(delay: float, stamps: Path) -> dict[str, str]:
    """Environment that makes the child's `import anthropic` `delay` s slower and stamps its end."""
    path = os.pathsep.join(p for p in (str(SLOW_SDK), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "SLOW_SDK_DELAY": str(delay), "SLOW_SDK_STAMPS": str(stamps)}


def mcp_config(tmp_path: Path, stamps: Path, **env: str) -> Path:
    """An --mcp-config file with one raw (SDK-free, instant) stdio server that stamps requests."""
    server = {
        "command": sys.executable,
        "args": [str(RAW_SERVER)],
        "env": {"MCP_STAMPS": str(stamps), **env},
    }
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"lookup": server}}))
    return path


def read_stamps(path: Path) -> dict[str, float]:
    """`name value` lines → {name: value} (the first of each name)."""
    found: dict[str, float] = {}
    for line in path.read_text().splitlines():
        name, _, value = line.partition(" ")
        found.setdefault(name, float(value))
    return found


def alive(pid: int) -> bool:
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def test_the_mcp_server_is_initialised_while_the_sdk_still_imports(tmp_path: Path) -> None:
    mcp_stamps, sdk_stamps = tmp_path / "mcp-stamps", tmp_path / "sdk-stamps"
    config = mcp_config(tmp_path, mcp_stamps)
    with MessagesServer([turn(text("hi"))]) as server:
        env = cli_env(server.base_url, tmp_path, **slow_sdk_env(4.0, sdk_stamps))
        done = subprocess.run(
            [*COMMAND, "-p", "hello", "--mcp-config", str(config)],
            cwd=project(tmp_path), env=env, capture_output=True, text=True, timeout=90,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        tools = [tool["name"] for tool in server.requests[0]["tools"]]
    assert "mcp__lookup__lookup" in tools
    mcp, sdk = read_stamps(mcp_stamps), read_stamps(sdk_stamps)
    assert mcp["initialize"] < sdk["sdk-imported"], "the server started only after the SDK"
    assert mcp["tools/list"] < sdk["sdk-imported"], "the handshake waited for the SDK"


@pytest.mark.parametrize("stubborn", [False, True], ids=["polite", "ignores-eof-and-sigterm"])
def test_exit_after_the_answer_terminates_the_server_without_the_sdk_waits(
    tmp_path: Path, stubborn: bool
) -> None:
    stamps = tmp_path / "mcp-stamps"
    config = mcp_config(tmp_path, stamps, MCP_STUBBORN="1" if stubborn else "0")
    with MessagesServer([turn(text("hi"))]) as server:
        child = subprocess.Popen(
            [*COMMAND, "-p", "hello", "--mcp-config", str(config)],
            cwd=project(tmp_path), env=cli_env(server.base_url, tmp_path),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert child.stdout is not None
        answer = child.stdout.readline()
        answered = time.monotonic()
        child.wait(timeout=60)
        exited = time.monotonic()
    assert answer == "hi\n" and child.returncode == 0
    assert exited - answered < SDK_WAITS_S * 0.75, "the exit waited out the SDK's timeouts"
    pid = int(read_stamps(stamps)["pid"])
    assert not alive(pid), "the MCP server outlived queryloop"


def test_a_startup_error_after_the_servers_started_still_ends_them(tmp_path: Path) -> None:
    stamps = tmp_path / "mcp-stamps"
    config = mcp_config(tmp_path, stamps)
    with MessagesServer([]) as server:
        env = cli_env(server.base_url, tmp_path)
        env.pop("ANTHROPIC_API_KEY")
        env.pop("ANTHROPIC_BASE_URL")  # no provider: assemble fails after starting MCP
        done = subprocess.run(
            [*COMMAND, "-p", "hello", "--mcp-config", str(config)],
            cwd=project(tmp_path), env=env, capture_output=True, text=True, timeout=90,
        )  # fmt: skip
    assert done.returncode == 2 and "needs the Anthropic API" in done.stderr
    # One line: no "Task was destroyed" or "Event loop is closed" from a half-started server.
    assert done.stderr.count("\n") == 1, done.stderr
    if stamps.exists():  # the server may not have got as far as starting
        assert not alive(int(read_stamps(stamps)["pid"])), "an MCP server was left behind"


NOT_BEFORE_THE_REQUEST = (
    *("httpx", "click", "rich", "pygments", "prompt_toolkit", "mcp"),
    *("ctypes", "queryloop.sandbox.seccomp", "queryloop.sandbox.supervisor"),
    *("queryloop.sandbox.service", "queryloop.permissions.shell.bash", "tree_sitter"),
)
"""Modules a `-p` run without http hooks, MCP servers, a terminal UI, a Bash command or a
sandbox has no use for (the exec check's machinery and the Bash parser load with the first
Bash command)."""


def test_print_mode_starts_without_full_collections_or_modules_it_does_not_use(
    tmp_path: Path,
) -> None:
    """Start-up builds objects that live as long as the process (the SDK's pydantic classes,
    our modules); a full pass of the cyclic collector walks all of them and frees nothing.
    The console script runs none of those passes before the first request (`cli/heap.py`)
    and collects as usual once the session has started. Nor does it import what the run
    never uses (httpx comes with its command line: click, rich, pygments)."""
    stamps = tmp_path / "stamps"
    watch = os.pathsep.join(p for p in (str(STARTUP_WATCH), os.environ.get("PYTHONPATH", "")) if p)
    with MessagesServer([turn(text("hi"))]) as server:
        env = cli_env(
            server.base_url, tmp_path, PYTHONPATH=watch, STARTUP_WATCH_STAMPS=str(stamps),
            STARTUP_WATCH_MODULES=" ".join(NOT_BEFORE_THE_REQUEST),
        )  # fmt: skip
        done = subprocess.run(
            [*COMMAND, "-p", "hello"],
            cwd=project(tmp_path), env=env, capture_output=True, text=True, timeout=90,
        )  # fmt: skip
        assert done.returncode == 0 and done.stdout == "hi\n", done.stderr
        requested = server.recorded[0].received_at
    lines = [line.split() for line in stamps.read_text().splitlines()]
    passes = [(kind, float(at)) for kind, at in (line for line in lines if line[0][:3] == "gen")]
    assert [at for gen, at in passes if gen == "gen2" and at < requested] == [], (
        "a full collection walked the start-up heap before the request"
    )
    assert any(at > requested for _, at in passes), "the collector stayed off"
    imported = [line[1:] for line in lines if line[0] == "modules"]
    assert imported == [[]], f"imported without a use: {imported}"
    assert ["collector", "on"] in lines


def test_a_subcommand_runs_with_the_collector_on(tmp_path: Path) -> None:
    """Only a session's start-up pauses the collector; a subcommand (`batch` may run for
    hours) has none, so it collects as usual from the start."""
    stamps = tmp_path / "stamps"
    watch = os.pathsep.join(p for p in (str(STARTUP_WATCH), os.environ.get("PYTHONPATH", "")) if p)
    env = cli_env(
        "http://127.0.0.1:9", tmp_path, PYTHONPATH=watch, STARTUP_WATCH_STAMPS=str(stamps)
    )
    done = subprocess.run(
        [*COMMAND, "sessions"],
        cwd=project(tmp_path), env=env, capture_output=True, text=True, timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "collector on" in stamps.read_text().splitlines()


def test_the_console_script_freezes_the_heap_before_the_interpreter_tears_down(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python's exit walks every live object (0.3-0.5 s with the SDK's pydantic classes);
    frozen objects are skipped."""
    monkeypatch.setattr(cli_main, "main", lambda: 3)
    gc.unfreeze()
    try:
        with pytest.raises(SystemExit) as exited:
            cli_main.entrypoint()
        assert exited.value.code == 3
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])
@pytest.mark.parametrize(
    "slow_module",
    [
        pytest.param(None, id="sdk"),
        # Not only the SDK: the Agent (and with it the loop, tools and settings) loads behind
        # the prompt too.
        pytest.param("queryloop.agent", id="agent"),
    ],
)
def test_the_repl_prompt_comes_before_the_import_and_the_first_line_waits_for_it(
    tmp_path: Path, term: str, slow_module: str | None
) -> None:
    """The import of the SDK (or of the Agent) is slowed on purpose; the prompt must not wait
    for it, and a line typed meanwhile is answered once it is done."""
    stamps = tmp_path / "import-stamps"
    env = slow_sdk_env(8.0, stamps)
    if slow_module is not None:
        env = {**env, "SLOW_SDK_MODULE": slow_module}
    with MessagesServer([turn(text("the answer"))]) as server:
        repl = ReplChild(server.base_url, tmp_path, term, **env)  # type: ignore[arg-type]
        try:
            repl.started()
            assert not stamps.exists(), "the prompt waited for the import"
            repl.sendline("hello")  # typed while the import is still under way
            repl.expect("the answer")
            repl.expect_prompt()
            assert stamps.exists()
            assert len(server.requests) == 1
            assert repl.exit() == 0
        finally:
            repl.close()


def test_the_repl_stops_on_broken_settings_before_the_sdk_and_before_any_request(
    tmp_path: Path,
) -> None:
    """The prompt no longer waits for the settings (they load behind it), but a file that
    cannot be parsed still stops the REPL, fail closed: at once (long before the slowed SDK
    import ends), with the error on a line of its own, exit 2, nothing sent to the model."""
    settings = project(tmp_path) / ".queryloop" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"permissions": {"deny": ["Read(./.env)"],}}')
    sdk_stamps = tmp_path / "sdk"
    with MessagesServer([]) as server:
        repl = ReplChild(
            server.base_url,
            tmp_path,
            "dumb",
            "--trust",
            **slow_sdk_env(8.0, sdk_stamps),  # type: ignore[arg-type]
        )
        try:
            repl.expect("invalid JSON")
            repl.expect(pexpect.EOF)
            assert "\nqueryloop: error: invalid settings" in repl.output().replace("\r", "")
            assert not sdk_stamps.exists(), "the settings were read only after the SDK import"
            repl.child.close()
            assert repl.child.exitstatus == 2
            assert server.requests == []
        finally:
            repl.close()


HOOK_WAIT = (
    "touch {began}; i=0; while [ ! -e {release} ] && [ $i -lt 1200 ]; do sleep 0.05; "
    "i=$((i+1)); done"
)
"""A SessionStart hook that holds the session's start until the test creates `release`."""


@pytest.mark.parametrize("term", ["xterm-256color", "dumb"])
def test_a_prompt_typed_while_the_session_loads_is_sent_once_it_is_ready(
    tmp_path: Path, term: str
) -> None:
    """The prompt is drawn and takes typing while the session still starts (a SessionStart
    hook holds it, and the line is typed only once the hook has begun); the line sent
    meanwhile waits, and goes to the model once the hook lets the session finish starting."""
    began, release = tmp_path / "hook-began", tmp_path / "release"
    hook = {"type": "command", "command": HOOK_WAIT.format(began=began, release=release)}
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "settings.json").write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}})
    )
    with MessagesServer([turn(text("the early answer"))]) as server:
        repl = ReplChild(server.base_url, tmp_path, term)
        try:
            repl.started()
            repl.wait_until(began.exists)  # the load is under way: the hook holds it
            repl.sendline("an early question")  # typed while the session is still starting
            repl.expect("an early question")  # accepted: shown on the input line
            assert server.requests == [], "a request went out before the session was ready"
            release.touch()
            repl.expect("the early answer")
            repl.expect_prompt()
            assert len(server.requests) == 1
            assert "an early question" in json.dumps(server.requests[0]["messages"])
            assert repl.exit() == 0
        finally:
            repl.close()
