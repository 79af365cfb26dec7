"""Deferred calls decided from another process, killed at every point after the deferral
(issue 33, item 3): each approved side effect happens exactly once.

The real `queryloop -p` command (subprocesses, SIGKILL), a real PreToolUse shell hook in the
user's settings that answers `defer` for every Bash call that deploys, and the local Messages
API server. One session, one sequence of processes:

1. the model calls two deploys at once; both are deferred: exit 9, the JSON result lists them
   (`subtype` deferred, `deferred_tool_uses`), nothing ran;
2. `--resume ID --approve A --approve B` is killed before it records anything;
3. the same command again, killed while A runs (its line is written, it sleeps): both
   decisions are recorded, A has started, B has not;
4. `--resume ID` without decisions: A is reported as interrupted (never run again), B runs
   with its recorded approval, the model answers: exit 0, each line once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import COMMAND, cli_env

from queryloop.cli.args import UsageError, parse_args
from queryloop.session import find_session
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

pytestmark = [pytest.mark.timeout(120)]

DEFER = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "defer",
        "permissionDecisionReason": "deploys need a person",
    }
}
# The hook reads the call on stdin: a deploy is deferred, anything else has no opinion.
HOOK = f"grep -q deploy && echo '{json.dumps(DEFER)}'; exit 0"
DEPLOY_A = {"command": "echo a >> deploy.log; sleep 3 # deploy a"}
DEPLOY_B = {"command": "echo b >> deploy.log # deploy b"}


def model(body: dict[str, Any]) -> Turn:
    """Both deploys at once; once their results are in, a final answer."""
    if "tool_result" in json.dumps(body["messages"]):
        return turn(text("Both deploys handled."))
    return turn(tool_use("Bash", DEPLOY_A, id="toolu_a"), tool_use("Bash", DEPLOY_B, id="toolu_b"))


def deferral_events(path: Path) -> list[tuple[str, str]]:
    found = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        message = record.get("message", {})
        if message.get("subtype") == "deferred_tool_use":
            data = message["metadata"]
            found.append((data["event"], data["tool_use_id"]))
    return found


def wait_for(ready: Any, proc: subprocess.Popen[str], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_approvals_killed_at_each_point_run_each_call_exactly_once(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    hook = {"type": "command", "command": HOOK}
    (home / "settings.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}})
    )
    log = proj / "deploy.log"
    base = [*COMMAND, "-p", "--output-format", "json", "--permission-mode", "bypassPermissions"]
    with MessagesServer(model) as server:
        env = cli_env(server.base_url, tmp_path)

        def run(*args: str) -> subprocess.Popen[str]:
            return subprocess.Popen(
                [*base, *args], cwd=proj, env=env, text=True, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            )  # fmt: skip

        first = run("deploy both")
        out, err = first.communicate(timeout=60)
        assert first.returncode == 9, err
        result = json.loads(out)
        assert (result["subtype"], result["terminal_reason"]) == ("deferred", "deferred")
        assert [d["tool_use_id"] for d in result["deferred_tool_uses"]] == ["toolu_a", "toolu_b"]
        assert result["deferred_tool_uses"][0]["deferred_by"]["kind"] == "hook"
        assert not log.exists()
        session = result["session_id"]
        transcript = find_session(session, proj, home)
        approve = ("--resume", session, "--approve", "toolu_a", "--approve", "toolu_b")

        early = run(*approve)  # killed before it records a decision
        early.send_signal(signal.SIGKILL)
        early.communicate(timeout=30)
        assert [e for e, _ in deferral_events(transcript)] == ["deferred", "deferred"]

        during = run(*approve)  # killed while A runs
        wait_for(lambda: log.exists() and log.read_text() == "a\n", during)
        os.kill(during.pid, signal.SIGKILL)
        during.communicate(timeout=30)
        assert deferral_events(transcript)[2:] == [
            ("decided", "toolu_a"), ("decided", "toolu_b"), ("started", "toolu_a"),
        ]  # fmt: skip

        last = run("--resume", session)  # no decisions: the recorded ones stand
        out, err = last.communicate(timeout=60)
        assert last.returncode == 0, err
        assert json.loads(out)["result"] == "Both deploys handled."
        assert log.read_text().splitlines() == ["a", "b"]  # each exactly once
        final = server.requests[-1]
    results = {
        b["tool_use_id"]: json.dumps(b)
        for m in final["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }
    assert "may or may not have taken effect" in results["toolu_a"]  # interrupted, not re-run
    assert '"is_error": true' not in results["toolu_b"]
    assert [v for v in server.violations if v] == []


def test_approve_and_deny_flags_parse_and_refuse_what_cannot_work() -> None:
    opts = parse_args(
        ["-p", "--resume", "3f2a", "--deny", "toolu_1=not now", "--approve", "toolu_2"]
    )
    assert opts is not None
    assert (opts.approve, opts.deny) == (("toolu_2",), (("toolu_1", "not now"),))
    with pytest.raises(UsageError, match="use them with -p and --resume"):
        parse_args(["-p", "hi", "--approve", "toolu_2"])
    with pytest.raises(UsageError, match="toolu_2 decided more than once"):
        parse_args(["-p", "--resume", "3f2a", "--approve", "toolu_2", "--deny", "toolu_2"])
