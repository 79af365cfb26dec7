"""`QUERYLOOP_SESSION_STORE=sqlite:///...` through the real `queryloop` command: a run killed
with SIGKILL while its tool runs has its messages in the database (each is stored before the
next step starts), `--continue` finds and repairs it there, and `queryloop report` reads it
from there (`queryloop sessions`: test_session_stores_e2e). No JSONL transcript is written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from cli_helpers import COMMAND, cli_env, project

from queryloop.session.sqlite_store import SqliteSessionStore
from queryloop.session.store import project_key
from queryloop.session.store_api import SessionKey
from queryloop.testing import MessagesServer, text, tool_use, turn


def _wait_for(path: Path, proc: subprocess.Popen[str], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "the tool never started"
        time.sleep(0.01)


def test_sigkilled_run_in_sqlite_continues_lists_and_reports(tmp_path: Path) -> None:
    cwd = project(tmp_path)
    db = tmp_path / "sessions.db"
    started = tmp_path / "tool-started"
    script = [
        turn(text("Waiting."), tool_use("Bash", {"command": f"touch {started}; sleep 60"})),
        turn(text("CONTINUED-ANSWER")),
    ]
    with MessagesServer(script) as server:
        env = cli_env(server.base_url, tmp_path, QUERYLOOP_SESSION_STORE=f"sqlite:///{db}")
        run = [*COMMAND, "-p", "--permission-mode", "bypassPermissions"]
        proc = subprocess.Popen(
            [*run, "FIRST-PROMPT"], cwd=cwd, env=env, text=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        try:
            _wait_for(started, proc)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # the CLI and its tool, at once
            proc.wait()
            if proc.stderr:
                proc.stderr.close()

        store = SqliteSessionStore(db)
        [session] = store.list_sessions(project_key(cwd))
        key = SessionKey(project_key=project_key(cwd), session_id=session["session_id"])
        stored = json.dumps(store.load(key))
        store.close()
        assert "FIRST-PROMPT" in stored and "sleep 60" in stored  # in before the tool ran

        done = subprocess.run(
            [*run, "--continue", "SECOND-PROMPT"], cwd=cwd, env=env,
            capture_output=True, text=True, timeout=90,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "CONTINUED-ANSWER" in done.stdout
        sent = json.dumps(server.requests[-1]["messages"])
        assert "FIRST-PROMPT" in sent and "SECOND-PROMPT" in sent
        assert '"is_error": true' in sent  # the killed call's stand-in result

        out = tmp_path / "page.html"
        report = subprocess.run(
            [*COMMAND, "report", session["session_id"][:8], "--out", str(out)],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert report.returncode == 0, report.stderr
        assert session["session_id"] in out.read_text(encoding="utf-8")
    assert not list((tmp_path / "home").rglob("*.jsonl"))
