"""kill -9 in the middle of a subagent, then `--continue`: the parent's Agent call is answered
(never orphaned), the model is told which subagent was cut off, and it can resume it from its
sidechain transcript."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from subagent_support import by_thread, result_text, tool_results

from queryloop.session import latest_session, load_transcript
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

COMMAND = [sys.executable, "-m", "queryloop.cli.main"]


def cli_env(base_url: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.pop("QUERYLOOP_MODEL", None)
    env.update(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="test-key",
        QUERYLOOP_HOME=str(home),
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.mark.slow
def test_kill_9_during_a_subagent_then_continue_answers_and_resumes_it(tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    child_waiting = threading.Event()
    release = threading.Event()

    def parent(body: dict[str, Any]) -> Turn:
        if not tool_results(body):
            return turn(tool_use("Agent", {"description": "long job", "prompt": "CHILD-A: work"}))
        return turn(text("never reached"))

    def stuck_child(body: dict[str, Any]) -> Turn:
        child_waiting.set()
        release.wait(30)  # the process is killed meanwhile
        return turn(text("too late"))

    with MessagesServer(by_thread(parent, {"CHILD-A": stuck_child})) as server:
        proc = subprocess.Popen(
            [*COMMAND, "-p", "delegate the long job"],
            cwd=project,
            env=cli_env(server.base_url, home),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            assert child_waiting.wait(60), "the subagent never called the model"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
        finally:
            release.set()
            if proc.poll() is None:
                proc.kill()
            if proc.stderr is not None:
                proc.stderr.close()

    transcript = latest_session(project, home)
    assert transcript is not None
    sidechains = list((transcript.parent / transcript.stem / "subagents").glob("agent-*.jsonl"))
    assert len(sidechains) == 1
    agent_id = sidechains[0].stem.removeprefix("agent-")

    seen: dict[str, Any] = {}

    def parent_after(body: dict[str, Any]) -> Turn:
        results = tool_results(body)
        if len(results) == 1:
            seen["answered"] = results[0]
            seen["note"] = json.dumps(body["messages"])
            found = re.search(r'resume: \\"(a[0-9a-f]+)\\"', seen["note"])
            assert found is not None
            return turn(
                tool_use(
                    "Agent",
                    {"description": "finish it", "prompt": "continue", "resume": found.group(1)},
                )
            )
        seen["resumed_result"] = results[-1]
        return turn(text("finished after the crash"))

    def resumed_child(body: dict[str, Any]) -> Turn:
        seen["child_history"] = json.dumps(body["messages"])
        return turn(text("child finished the job"))

    with MessagesServer(by_thread(parent_after, {"CHILD-A": resumed_child})) as server:
        done = subprocess.run(
            [*COMMAND, "-p", "go on", "--continue", "--output-format", "json"],
            cwd=project,
            env=cli_env(server.base_url, home),
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert [v for v in server.violations if v] == []
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "finished after the crash"
    answered = seen["answered"]
    assert answered["is_error"] is True  # the interrupted call got an answer on resume
    assert f"agentId {agent_id}" in seen["note"]
    assert "CHILD-A: work" in seen["child_history"] and "continue" in seen["child_history"]
    assert result_text(seen["resumed_result"]).startswith("child finished the job")
    loaded = load_transcript(sidechains[0])
    assert loaded.metadata["parent_tool_use_id"] == answered["tool_use_id"]
    assert any(m.type == "assistant" for m in loaded.messages)
