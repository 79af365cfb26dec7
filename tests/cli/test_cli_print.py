"""Print mode as a subprocess against the local Messages API server."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import json_lines, project, run_cli, user_texts

from queryloop.testing import MessagesServer, http_error, text, tool_use, turn


def test_text_output_and_transcript(tmp_path: Path) -> None:
    with MessagesServer([turn(text("Hello from the model."))]) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "say hello")
        assert server.violations == [[]]
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from the model.\n"
    assert "say hello" in user_texts(server.requests[0])[-1]
    transcripts = list((tmp_path / "home" / "projects").glob("*/*.jsonl"))
    assert len(transcripts) == 1


def test_json_result_object(tmp_path: Path) -> None:
    with MessagesServer([turn(text("Done."))]) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "hi", "--output-format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["type"] == "result" and result["terminal_reason"] == "completed"
    assert result["is_error"] is False and result["result"] == "Done."
    assert result["num_turns"] == 1 and result["exit_code"] == 0
    assert result["usage"]["output_tokens"] > 0 and result["duration_ms"] >= 0
    assert isinstance(result["total_cost_usd"], float)
    sessions = list((tmp_path / "home" / "projects").glob(f"*/{result['session_id']}.jsonl"))
    assert len(sessions) == 1


def test_stream_json_schema_with_a_tool_call(tmp_path: Path) -> None:
    script = [
        turn(text("Let me check."), tool_use("Bash", {"command": "echo marker-42"})),
        turn(text("The output was marker-42.")),
    ]
    with MessagesServer(script) as server:
        done = run_cli(
            server.base_url,
            tmp_path,
            "-p",
            "run it",
            "--output-format",
            "stream-json",
            "--include-partial-messages",
            "--allowed-tools",
            "Bash(echo:*)",
        )
        assert all(v == [] for v in server.violations)
    assert done.returncode == 0, done.stderr
    lines = json_lines(done.stdout)
    kinds = [r["type"] for r in lines]
    assert kinds[0] == "system" and lines[0]["subtype"] == "init"
    assert {"session_id", "model", "cwd", "tools"} <= set(lines[0])
    assert "Bash" in lines[0]["tools"] and lines[0]["cwd"] == str(project(tmp_path).resolve())
    assert kinds[-1] == "result" and lines[-1]["terminal_reason"] == "completed"
    assert all(r["session_id"] == lines[0]["session_id"] for r in lines)
    tool_uses = [
        b
        for r in lines
        if r["type"] == "assistant"
        for b in r["message"]["content"]
        if b["type"] == "tool_use"
    ]
    assert [t["input"]["command"] for t in tool_uses] == ["echo marker-42"]
    results = [
        b
        for r in lines
        if r["type"] == "user" and isinstance(r["message"]["content"], list)
        for b in r["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert len(results) == 1 and "marker-42" in json.dumps(results[0]["content"])
    assert any(r["type"] == "transition" and r["reason"] == "next_turn" for r in lines)
    deltas = "".join(
        r["event"]["text"]
        for r in lines
        if r["type"] == "stream_event" and r["event"]["type"] == "text_delta"
    )
    assert "The output was marker-42." in deltas
    # Order: the tool call, then its result, then the final result line.
    first_use = next(
        i
        for i, r in enumerate(lines)
        if r["type"] == "assistant"
        and any(b["type"] == "tool_use" for b in r["message"]["content"])
    )
    first_result = next(
        i
        for i, r in enumerate(lines)
        if r["type"] == "user" and "tool_result" in json.dumps(r["message"]["content"])
    )
    assert first_use < first_result < len(lines) - 1


def test_prompt_from_stdin_and_stream_json_without_partials(tmp_path: Path) -> None:
    with MessagesServer([turn(text("ok"))]) as server:
        done = run_cli(
            server.base_url,
            tmp_path,
            "-p",
            "--output-format",
            "stream-json",
            stdin="a prompt from a pipe\n",
        )
    assert done.returncode == 0, done.stderr
    assert "a prompt from a pipe" in user_texts(server.requests[0])[-1]
    records = json_lines(done.stdout)
    assert records[-1]["type"] == "result" and records[-1]["result"] == "ok"
    assert not any(r["type"] == "stream_event" for r in records)


def test_max_turns_exit_code(tmp_path: Path) -> None:
    script = [turn(tool_use("Bash", {"command": "echo again"})) for _ in range(3)]
    with MessagesServer(script) as server:
        done = run_cli(
            server.base_url,
            tmp_path,
            "-p",
            "loop",
            "--max-turns",
            "1",
            "--allowed-tools",
            "Bash(echo:*)",
            "--output-format",
            "json",
        )
    assert done.returncode == 3, done.stderr
    assert json.loads(done.stdout)["terminal_reason"] == "max_turns"


def test_model_error_exit_code_and_one_line(tmp_path: Path) -> None:
    with MessagesServer([turn(text("never"))]) as server:
        server.inject(http_error(401, "authentication_error", "invalid x-api-key"))
        done = run_cli(server.base_url, tmp_path, "-p", "hi")
    assert done.returncode == 5
    assert "Traceback" not in done.stderr and done.stderr.strip()


def test_unknown_session_is_a_usage_error(tmp_path: Path) -> None:
    with MessagesServer([]) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "hi", "--resume", "no-such-session")
        assert server.requests == []
    assert done.returncode == 2 and "no-such-session" in done.stderr


def test_resume_by_prefix_carries_the_conversation(tmp_path: Path) -> None:
    with MessagesServer([turn(text("First answer.")), turn(text("Second."))]) as server:
        first = run_cli(
            server.base_url, tmp_path, "-p", "first question", "--output-format", "json"
        )
        session_id = json.loads(first.stdout)["session_id"]
        second = run_cli(
            server.base_url,
            tmp_path,
            "-p",
            "second question",
            "--resume",
            session_id[:8],
            "--output-format",
            "json",
        )
        bodies = server.requests
        assert all(v == [] for v in server.violations)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["session_id"] == session_id
    assistant = [
        json.dumps(m["content"]) for m in bodies[1]["messages"] if m["role"] == "assistant"
    ]
    assert any("First answer." in t for t in assistant)
    joined = " ".join(user_texts(bodies[1]))
    assert "first question" in joined and "second question" in joined


def test_refused_calls_are_listed_in_the_result_and_streamed(tmp_path: Path) -> None:
    script = [
        turn(tool_use("Bash", {"command": "touch refused.txt"})),
        turn(text("I could not create it.")),
    ]
    with MessagesServer(script) as server:
        done = run_cli(server.base_url, tmp_path, "-p", "make it", "--output-format", "stream-json")
    assert done.returncode == 0, done.stderr
    assert not (project(tmp_path) / "refused.txt").exists()
    lines = json_lines(done.stdout)
    [streamed] = [r for r in lines if r.get("subtype") == "permission_denied"]
    assert streamed["type"] == "system"
    assert streamed["message"]["metadata"]["tool_name"] == "Bash"
    [denial] = lines[-1]["permission_denials"]
    assert denial["tool_name"] == "Bash" and denial["source"] == "no_approver"
    assert denial["tool_input"] == {"command": "touch refused.txt"}
    assert denial["tool_use_id"] == streamed["message"]["metadata"]["tool_use_id"]
    assert "--allowed-tools 'Bash(touch:*)'" in denial["message"]
    assert lines[-1]["terminal_reason"] == "completed" and lines[-1]["num_requests"] == 2
