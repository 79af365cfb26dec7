"""Each new event fires once, at its moment, with Claude Code's input fields: through the real
Agent, its loop, tools and executor, with real shell hooks and a scripted model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from queryloop import Agent
from queryloop.hooks import CommandHook, HookMatcher
from queryloop.loop import Terminal
from queryloop.messages import Message
from queryloop.providers.errors import AuthenticationError
from queryloop.testing import ScriptedProvider, text, tool_use, turn


def recorder(log: Path, then: str = "") -> CommandHook:
    """A real shell hook: appends the event JSON it reads to `log`, then runs `then`."""
    return CommandHook(f"cat >> {log}; echo >> {log}; {then}")


def events(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def agent(tmp_path: Path, home: Path, script: list[Any], hooks: dict[str, Any], **kw: Any) -> Agent:
    return Agent(
        "claude-sonnet-5-5",
        provider=ScriptedProvider(script),
        cwd=tmp_path,
        home=home,
        hooks=hooks,
        **kw,
    )


async def test_post_tool_use_failure_fires_for_a_failed_tool_not_post_tool_use(
    tmp_path: Path, home: Path
) -> None:
    log, post = tmp_path / "fail.jsonl", tmp_path / "post.jsonl"
    script = [
        turn(tool_use("Bash", {"command": "echo oops >&2; exit 3"})),
        turn(tool_use("Bash", {"command": "echo fine"})),
        turn(text("done")),
    ]
    hooks = {
        "PostToolUseFailure": [
            HookMatcher("Bash", [recorder(log, "echo 'try --verbose' >&2; exit 2")])
        ],
        "PostToolUse": [recorder(post)],
    }
    a = agent(tmp_path, home, script, hooks, permission_mode="bypassPermissions")
    result = await a.run("go")
    await a.aclose()
    assert result.terminal is Terminal.COMPLETED
    [failure] = events(log)
    assert failure["hook_event_name"] == "PostToolUseFailure"
    assert failure["tool_name"] == "Bash" and failure["tool_input"]["command"].startswith(
        "echo oops"
    )
    assert "oops" in failure["error"] and failure["is_interrupt"] is False
    assert isinstance(failure["duration_ms"], int) and failure["tool_use_id"]
    assert [e["tool_input"]["command"] for e in events(post)] == ["echo fine"]
    # exit 2's stderr reached the model beside the failed result
    assert "try --verbose" in json.dumps([m.to_dict() if hasattr(m, "to_dict") else str(m)
                                          for m in a.messages], default=str)  # fmt: skip


async def test_post_tool_batch_fires_once_per_batch_and_can_stop_the_loop(
    tmp_path: Path, home: Path
) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    log = tmp_path / "batch.jsonl"
    script = [
        turn(tool_use("Read", {"file_path": "a.txt"}), tool_use("Read", {"file_path": "b.txt"})),
        turn(text("never asked")),
    ]
    block = recorder(log, "echo 'ledger files need pytest first' >&2; exit 2")
    a = agent(tmp_path, home, script, {"PostToolBatch": [block]})
    result = await a.run("read both")
    await a.aclose()
    [batch] = events(log)
    assert [c["tool_input"]["file_path"] for c in batch["tool_calls"]] == ["a.txt", "b.txt"]
    assert "alpha" in json.dumps(batch["tool_calls"][0]["tool_response"])
    assert result.terminal is Terminal.HOOK_STOPPED
    assert "ledger files need pytest first" in (a.last_terminal.detail if a.last_terminal else "")


async def test_permission_request_answers_for_the_user_headless(tmp_path: Path, home: Path) -> None:
    log = tmp_path / "req.jsonl"
    allow = (
        'echo \'{"hookSpecificOutput": {"hookEventName": "PermissionRequest", '
        '"decision": {"behavior": "allow"}}}\''
    )
    script = [turn(tool_use("Write", {"file_path": "new.txt", "content": "hi"})), turn(text("ok"))]
    hooks = {"PermissionRequest": [HookMatcher("Write", [recorder(log, allow)])]}
    a = agent(tmp_path, home, script, hooks)  # default mode: Write asks; nobody to ask
    result = await a.run("write it")
    await a.aclose()
    assert (tmp_path / "new.txt").read_text() == "hi"
    [request] = events(log)
    assert request["hook_event_name"] == "PermissionRequest" and "tool_use_id" not in request
    assert request["tool_input"]["file_path"] == "new.txt"
    assert request["permission_suggestions"][0]["type"] == "addRules"
    assert not result.denials


async def test_permission_denied_fires_when_nobody_could_approve(
    tmp_path: Path, home: Path
) -> None:
    log, req = tmp_path / "denied.jsonl", tmp_path / "req.jsonl"
    retry = 'echo \'{"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": true}}\''
    script = [turn(tool_use("Write", {"file_path": "x.txt", "content": "x"})), turn(text("ok"))]
    hooks = {
        "PermissionDenied": [recorder(log, retry)],
        "PermissionRequest": [recorder(req)],  # no decision: the headless denial stands
    }
    a = agent(tmp_path, home, script, hooks)
    result = await a.run("write it")
    await a.aclose()
    assert not (tmp_path / "x.txt").exists()
    assert len(events(req)) == 1
    [denied] = events(log)
    assert denied["tool_name"] == "Write" and denied["tool_use_id"]
    assert "denied" in denied["reason"].lower()
    assert len(result.denials) == 1
    assert any("may be retried" in str(getattr(m, "content", "")) for m in a.messages)


async def test_session_start_instructions_loaded_and_session_end(
    tmp_path: Path, home: Path
) -> None:
    (tmp_path / "QUERYLOOP.md").write_text("Use tabs.\n")
    start, loaded, end = tmp_path / "start.jsonl", tmp_path / "loaded.jsonl", tmp_path / "end.jsonl"
    hooks = {
        "SessionStart": [HookMatcher("startup", [recorder(start)])],
        "InstructionsLoaded": [HookMatcher("session_start", [recorder(loaded)])],
        "SessionEnd": [recorder(end)],
    }
    a = agent(tmp_path, home, [turn(text("hi")), turn(text("again"))], hooks)
    await a.run("one")
    await a.run("two")
    assert events(end) == []
    await a.aclose()
    [s] = events(start)
    assert s["source"] == "startup" and s["model"] == "claude-sonnet-5-5"
    [m] = events(loaded)
    assert m["file_path"] == str((tmp_path / "QUERYLOOP.md").resolve())
    assert m["memory_type"] == "Project" and m["load_reason"] == "session_start"
    [e] = events(end)
    assert e["hook_event_name"] == "SessionEnd" and e["reason"] == "other"


async def test_stop_failure_fires_instead_of_stop(tmp_path: Path, home: Path) -> None:
    failure, stop = tmp_path / "failure.jsonl", tmp_path / "stop.jsonl"
    hooks = {
        "StopFailure": [HookMatcher("authentication_failed", [recorder(failure)])],
        "Stop": [recorder(stop)],
    }
    a = agent(tmp_path, home, [AuthenticationError("invalid x-api-key", status=401)], hooks)
    result = await a.run("hi")
    await a.aclose()
    assert result.terminal is Terminal.MODEL_ERROR
    [f] = events(failure)
    assert f["error"] == "authentication_failed" and "invalid x-api-key" in f["error_details"]
    assert events(stop) == []


async def test_post_compact_gets_the_summary(tmp_path: Path, home: Path) -> None:
    log = tmp_path / "compact.jsonl"
    script = [turn(text("first answer")), turn(text("Summary: we said hello."))]
    a = agent(tmp_path, home, script, {"PostCompact": [HookMatcher("manual", [recorder(log)])]})
    await a.run("hello")
    await a.compact("keep it short")
    await a.aclose()
    [c] = events(log)
    assert c["trigger"] == "manual" and "we said hello" in c["compact_summary"]


async def test_cwd_changed_when_bash_moves(tmp_path: Path, home: Path) -> None:
    (tmp_path / "sub").mkdir()
    log = tmp_path / "cwd.jsonl"
    script = [
        turn(tool_use("Bash", {"command": "cd sub"})),
        turn(tool_use("Bash", {"command": "pwd"})),
        turn(text("moved")),
    ]
    a = agent(
        tmp_path, home, script, {"CwdChanged": [recorder(log)]}, permission_mode="bypassPermissions"
    )
    await a.run("go to sub")
    await a.aclose()
    [c] = events(log)
    assert (
        c["old_cwd"] == str(tmp_path)
        and Path(c["new_cwd"]).resolve() == (tmp_path / "sub").resolve()
    )
    assert c["cwd"] == c["new_cwd"]


async def test_task_created_and_completed_from_the_todo_list(tmp_path: Path, home: Path) -> None:
    created, completed = tmp_path / "created.jsonl", tmp_path / "completed.jsonl"
    refuse = (
        f"tail -n 1 {completed} | grep -q 'ship it' && "
        "{ echo 'tests must pass before ship it' >&2; exit 2; }; exit 0"
    )
    todos1 = [{"content": "write code", "status": "in_progress"},
              {"content": "ship it", "status": "pending"}]  # fmt: skip
    todos2 = [{"content": "write code", "status": "completed"},
              {"content": "ship it", "status": "completed"}]  # fmt: skip
    script = [
        turn(tool_use("TodoWrite", {"todos": todos1})),
        turn(tool_use("TodoWrite", {"todos": todos2})),
        turn(text("done")),
    ]
    hooks = {
        "TaskCreated": [recorder(created)],
        "TaskCompleted": [recorder(completed, refuse)],
    }
    a = agent(tmp_path, home, script, hooks)
    await a.run("plan")
    await a.aclose()
    assert [e["task_subject"] for e in events(created)] == ["write code", "ship it"]
    assert events(created)[0]["task_id"] == "write code"
    assert [e["task_subject"] for e in events(completed)] == ["write code", "ship it"]
    results = json.dumps([str(getattr(m, "content", "")) for m in a.messages])
    assert "tests must pass before ship it" in results  # the refusal reached the model


async def test_pre_tool_use_blocks_the_agent_tool(tmp_path: Path, home: Path) -> None:
    starts = tmp_path / "starts.jsonl"
    block = CommandHook("cat > /dev/null; echo 'no subagents in this repo' >&2; exit 2")
    script = [
        turn(tool_use("Agent", {"description": "look", "prompt": "read secrets"})),
        turn(text("could not delegate")),
    ]
    provider = ScriptedProvider(script)
    a = Agent(
        "claude-sonnet-5-5", provider=provider, cwd=tmp_path, home=home,
        hooks={"PreToolUse": [HookMatcher("Agent", [block])],
               # A bare hook object stands for HookMatcher("", [hook]) (HooksConfig.of);
               # AgentOptions' `hooks` type names only matchers and callables.
               "SubagentStart": [recorder(starts)]},  # type: ignore[list-item]
    )  # fmt: skip
    result = await a.run("delegate")
    await a.aclose()
    assert len(provider.requests) == 2  # no subagent ever asked the model
    assert events(starts) == []
    assert [d.tool_name for d in result.denials] == ["Agent"]
    assert "no subagents in this repo" in json.dumps(
        [str(getattr(m, "content", "")) for m in a.messages]
    )


async def test_pre_tool_use_blocks_a_subagents_own_tool_call(tmp_path: Path, home: Path) -> None:
    (tmp_path / "secret.txt").write_text("TOPSECRET\n")
    log = tmp_path / "pre.jsonl"
    block = CommandHook(
        "grep -q secret && { echo 'secret files are off limits' >&2; exit 2; }; exit 0"
    )
    script = [
        turn(tool_use("Agent", {"description": "look", "prompt": "read secret.txt"})),
        turn(tool_use("Read", {"file_path": "secret.txt"})),  # the subagent's call
        turn(text("I was not allowed to read it.")),  # the subagent's answer
        turn(text("The subagent could not read it.")),
    ]
    provider = ScriptedProvider(script)
    a = Agent(
        "claude-sonnet-5-5", provider=provider, cwd=tmp_path, home=home,
        permission_mode="bypassPermissions",
        hooks={"PreToolUse": [HookMatcher("Read", [block, recorder(log)])]},
    )  # fmt: skip
    result = await a.run("delegate")
    await a.aclose()
    assert result.terminal is Terminal.COMPLETED
    [read] = events(log)
    assert read["agent_id"]  # the subagent's call says whose it is
    subagent_next = json.dumps(provider.requests[2].messages)
    assert "secret files are off limits" in subagent_next and "TOPSECRET" not in subagent_next


async def test_instructions_loaded_for_a_nested_memory_file(tmp_path: Path, home: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/QUERYLOOP.md").write_text("pkg uses snake_case\n")
    (tmp_path / "pkg/mod.py").write_text("x = 1\n")
    log = tmp_path / "loaded.jsonl"
    script = [turn(tool_use("Read", {"file_path": "pkg/mod.py"})), turn(text("read"))]
    hooks = {"InstructionsLoaded": [HookMatcher("nested_traversal", [recorder(log)])]}
    a = agent(tmp_path, home, script, hooks)
    await a.run("read pkg/mod.py")
    await a.aclose()
    [m] = events(log)
    assert m["file_path"] == str((tmp_path / "pkg/QUERYLOOP.md").resolve())
    assert m["load_reason"] == "nested_traversal" and m["memory_type"] == "Project"


async def test_instructions_loaded_for_a_path_rule(tmp_path: Path, home: Path) -> None:
    rule = tmp_path / ".claude/rules/py.md"
    rule.parent.mkdir(parents=True)
    rule.write_text('---\npaths: ["pkg/**/*.py"]\n---\nfunctions are typed\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/mod.py").write_text("x = 1\n")
    log = tmp_path / "loaded.jsonl"
    script = [turn(tool_use("Read", {"file_path": "pkg/mod.py"})), turn(text("read"))]
    hooks = {"InstructionsLoaded": [HookMatcher("path_glob_match", [recorder(log)])]}
    a = agent(tmp_path, home, script, hooks, trust=True)
    await a.run("read pkg/mod.py")
    await a.aclose()
    [m] = events(log)
    assert m["file_path"] == str(rule.resolve()) and m["memory_type"] == "Project"
    assert m["load_reason"] == "path_glob_match" and m["globs"] == ["pkg/**/*.py"]
    assert m["trigger_file_path"] == str(tmp_path / "pkg/mod.py")


async def test_clear_ends_the_session_and_starts_the_next(tmp_path: Path, home: Path) -> None:
    log = tmp_path / "sessions.jsonl"
    hooks = {"SessionStart": [recorder(log)], "SessionEnd": [recorder(log)]}
    a = agent(tmp_path, home, [turn(text("hi")), turn(text("fresh"))], hooks)
    await a.run("one")
    first = a.session_id
    await a.aclear()
    await a.run("two")
    await a.aclose()
    seen = [(e["hook_event_name"], e.get("source") or e.get("reason"), e["session_id"])
            for e in events(log)]  # fmt: skip
    assert seen == [
        ("SessionStart", "startup", first),
        ("SessionEnd", "clear", first),
        ("SessionStart", "clear", a.session_id),
        ("SessionEnd", "other", a.session_id),
    ]
    assert a.session_id != first


async def test_pre_compact_exit_2_skips_an_automatic_compaction(tmp_path: Path, home: Path) -> None:
    from queryloop.messages import assistant_message, user_message

    log = tmp_path / "compact.jsonl"
    history: list[Message] = [user_message("Task: count the sheep.")]
    for i in range(12):
        history.append(assistant_message(f"Counted batch {i}: " + "sheep " * 400))
        history.append(user_message(f"next batch {i}"))
    provider = ScriptedProvider([turn(text("Still counting."))])
    block = recorder(log, "echo 'not now' >&2; exit 2")
    a = Agent(
        "claude-sonnet-5-5", provider=provider, cwd=tmp_path, home=home, history=history,
        hooks={"PreCompact": [HookMatcher("auto", [block])]},
        autocompact_threshold=3_000, context_collapse=False,
    )  # fmt: skip
    result = await a.run("keep going")
    await a.aclose()
    assert [e["trigger"] for e in events(log)] == ["auto"]
    assert result.terminal is Terminal.COMPLETED
    assert len(provider.requests) == 1  # no summary was asked for: the history went as it was
    assert "batch 0" in json.dumps(provider.requests[0].messages)


async def test_post_tool_use_sees_bash_output_in_claude_codes_fields(
    tmp_path: Path, home: Path
) -> None:
    """A PostToolUse hook reads what the command printed (`stdout`, `stderr`), as Claude
    Code's Bash `tool_response` has it, beside queryloop's `exit_code`."""
    log = tmp_path / "post.jsonl"
    script = [turn(tool_use("Bash", {"command": "echo CRITICAL; echo warn >&2"})), turn(text("ok"))]
    hooks = {"PostToolUse": [recorder(log)]}
    a = agent(tmp_path, home, script, hooks, permission_mode="bypassPermissions")
    await a.run("go")
    await a.aclose()
    [post] = events(log)
    response = post["tool_response"]
    assert (response["stdout"], response["stderr"]) == ("CRITICAL", "warn")
    assert response["interrupted"] is False and response["exit_code"] == 0
