"""SIGKILL during a tool call, then --continue: nothing lost, and the next request is valid."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from cli_helpers import COMMAND, cli_env, project, run_cli

from queryloop.session import load_transcript
from queryloop.testing import MessagesServer, text, tool_use, turn


def test_sigkill_during_tool_call_then_resume(tmp_path: Path) -> None:
    slow = tool_use("Bash", {"command": "sleep 30"}, id="toolu_slow_1")
    with MessagesServer([turn(text("Starting the slow job."), slow)]) as server:
        proc = subprocess.Popen(
            [*COMMAND, "-p", "run the slow job", "--output-format", "stream-json",
             "--allowed-tools", "Bash(sleep:*)"],
            cwd=project(tmp_path), env=cli_env(server.base_url, tmp_path),
            stdout=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        assert proc.stdout is not None
        session_id = ""
        try:
            for line in proc.stdout:
                record = json.loads(line)
                session_id = record.get("session_id", session_id)
                if record["type"] == "assistant" and "toolu_slow_1" in line:
                    break  # the tool call is persisted and is now running
        finally:
            os.killpg(proc.pid, signal.SIGKILL)  # the command and its `sleep`
            proc.wait()
            proc.stdout.close()
        assert proc.returncode == -signal.SIGKILL

        # Nothing was lost: the prompt and the tool call are in the transcript.
        transcript = next((tmp_path / "home" / "projects").glob(f"*/{session_id}.jsonl"))
        raw = transcript.read_text()
        assert "run the slow job" in raw and "toolu_slow_1" in raw

        server.script([turn(text("Picking up where we left off."))])
        done = run_cli(server.base_url, tmp_path, "-p", "carry on", "--continue")
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "Picking up where we left off."
        resumed = server.recorded[-1]
        assert resumed.violations == ()
    messages = resumed.body["messages"]
    flat = json.dumps(messages)
    assert "run the slow job" in flat and "carry on" in flat
    tool_results = [
        b for m in messages if m["role"] == "user" for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]  # fmt: skip
    assert [(b["tool_use_id"], b.get("is_error")) for b in tool_results] == [("toolu_slow_1", True)]
    # The repair is on disk too: loading again finds nothing left to repair.
    assert load_transcript(transcript).repaired == ()


def test_sigint_in_print_mode_aborts_cleanly_with_130(tmp_path: Path) -> None:
    long_text = " ".join(f"w{i}" for i in range(3000))
    with MessagesServer([turn(text(long_text))], event_delay=0.02) as server:
        proc = subprocess.Popen(
            [*COMMAND, "-p", "talk", "--output-format", "stream-json",
             "--include-partial-messages"],
            cwd=project(tmp_path), env=cli_env(server.base_url, tmp_path),
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdout is not None
        for line in proc.stdout:
            if '"text_delta"' in line:
                break  # the answer is streaming
        proc.send_signal(signal.SIGINT)
        rest = proc.stdout.read()
        proc.wait(timeout=60)
        proc.stdout.close()
    assert proc.returncode == 130
    result = json.loads(rest.strip().splitlines()[-1])
    assert result["type"] == "result" and result["terminal_reason"] == "aborted_streaming"
    assert "w2999" not in rest
