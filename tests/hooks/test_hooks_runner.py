"""HookRunner with real shell scripts: decisions, exit codes, timeouts, garbage, callables."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from queryloop.hooks import (
    CommandHook,
    HookMatcher,
    HookRunner,
    HooksConfig,
    HookWarning,
    StopHookInput,
)
from queryloop.tools.base import ToolContext, ToolResult

SCRIPTS = Path(__file__).parent / "scripts"


def cmd(name: str, *args: str, timeout: float = 20) -> CommandHook:
    return CommandHook(" ".join([str(SCRIPTS / name), *args]), timeout)


def runner(tmp_path: Path, warnings: list[HookWarning] | None = None, **events: Any) -> HookRunner:
    return HookRunner(
        HooksConfig.of(**events),
        cwd=tmp_path,
        session_id="sess-1",
        transcript_path=tmp_path / "t.jsonl",
        env={"HOOK_OUT": str(tmp_path / "out.json")},
        on_warning=None if warnings is None else warnings.append,
    )


async def pre(r: HookRunner, tmp_path: Path, tool: str = "Bash", command: str = "ls") -> Any:
    return await r.pre_tool_use(tool, {"command": command}, "toolu_1", ToolContext(cwd=tmp_path))


async def test_pre_tool_use_gets_claude_code_fields_and_allows(tmp_path: Path) -> None:
    r = runner(tmp_path, PreToolUse=[HookMatcher("Bash", [cmd("record_and_allow.sh")])])
    outcome = await pre(r, tmp_path)
    assert outcome.decision == "allow" and outcome.reason == "ok by script"
    event = json.loads((tmp_path / "out.json").read_text())
    assert event["hook_event_name"] == "PreToolUse"
    assert event["tool_name"] == "Bash" and event["tool_input"] == {"command": "ls"}
    assert event["session_id"] == "sess-1" and event["cwd"] == str(tmp_path)
    assert event["transcript_path"].endswith("t.jsonl") and event["tool_use_id"] == "toolu_1"


async def test_matchers_select_tools(tmp_path: Path) -> None:
    marker = tmp_path / "out.json"
    r = runner(tmp_path, PreToolUse=[HookMatcher("Edit|Write", [cmd("record_and_allow.sh")])])
    assert (await pre(r, tmp_path, "Bash")).decision is None
    assert not marker.exists()
    assert (await pre(r, tmp_path, "Write")).decision == "allow"
    regex = runner(tmp_path, PreToolUse=[HookMatcher("mcp__.*", [cmd("record_and_allow.sh")])])
    assert (await pre(regex, tmp_path, "mcp__db__query")).decision == "allow"
    assert (await pre(regex, tmp_path, "Bash")).decision is None
    star = runner(tmp_path, PreToolUse=[HookMatcher("*", [cmd("record_and_allow.sh")])])
    assert (await pre(star, tmp_path, "Anything")).decision == "allow"


async def test_json_deny_and_exit_2_block(tmp_path: Path) -> None:
    r = runner(tmp_path, PreToolUse=[HookMatcher("Bash", [cmd("deny_rm.sh")])])
    assert (await pre(r, tmp_path, command="ls")).decision is None
    denied = await pre(r, tmp_path, command="rm -rf x")
    assert denied.decision == "deny" and denied.reason == "no deleting"
    blocked = await pre(runner(tmp_path, PreToolUse=[cmd("block_exit2.sh")]), tmp_path)
    assert blocked.decision == "deny" and blocked.reason == "blocked: tests must pass first"


async def test_deny_wins_over_allow(tmp_path: Path) -> None:
    r = runner(tmp_path, PreToolUse=[cmd("record_and_allow.sh"), cmd("block_exit2.sh")])
    assert (await pre(r, tmp_path)).decision == "deny"


async def test_updated_input(tmp_path: Path) -> None:
    outcome = await pre(runner(tmp_path, PreToolUse=[cmd("rewrite_input.sh")]), tmp_path)
    assert outcome.updated_input == {"command": "echo safe"}


async def test_garbage_and_failing_hooks_are_warnings(tmp_path: Path) -> None:
    warnings: list[HookWarning] = []
    r = runner(tmp_path, warnings, PreToolUse=[cmd("garbage.sh"), cmd("fail_exit1.sh")])
    outcome = await pre(r, tmp_path)
    assert outcome.decision is None
    messages = sorted(w.message for w in warnings)
    assert any("invalid JSON" in m for m in messages)
    assert any("status 1" in m and "something broke" in m for m in messages)
    missing = runner(tmp_path, warnings, PreToolUse=[CommandHook("/nonexistent/hook.sh")])
    assert (await pre(missing, tmp_path)).decision is None
    assert "status 127" in warnings[-1].message


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in status


async def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    warnings: list[HookWarning] = []
    r = runner(tmp_path, warnings, PreToolUse=[cmd("hang.sh", timeout=0.5)])
    outcome = await pre(r, tmp_path)
    assert outcome.decision is None
    assert "timed out after 0.5s" in warnings[0].message
    child = int((tmp_path / "out.json").read_text())
    deadline = time.monotonic() + 10
    for _ in range(200):  # the kernel reaps asynchronously; poll for the observable state
        if not _alive(child) or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    assert not _alive(child)


async def test_post_tool_use_context_and_block(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path)
    result = ToolResult("file contents", data={"lines": 3})
    r = runner(tmp_path, PostToolUse=[cmd("context.sh")])
    outcome = await r.post_tool_use("Read", {"file_path": "a"}, result, "t1", ctx)
    assert outcome.additional_context == "remember to run the linter"
    assert outcome.block_reason is None
    blocked = await runner(tmp_path, PostToolUse=[cmd("block_exit2.sh")]).post_tool_use(
        "Read", {}, result, "t1", ctx
    )
    assert blocked.block_reason == "blocked: tests must pass first"


async def test_post_tool_use_sees_tool_response(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    r = runner(tmp_path, PostToolUse=[seen.append])
    await r.post_tool_use("Read", {}, ToolResult("text"), "t1", ToolContext(cwd=tmp_path))
    assert seen[0]["tool_response"] == {"content": "text", "is_error": False}


async def test_stop_block_then_allow_and_prevent(tmp_path: Path) -> None:
    r = runner(tmp_path, Stop=[cmd("stop_block.sh")])
    first = await r.stop([], "done", stop_hook_active=False)
    assert (first.decision, first.message) == ("block", "you forgot the tests")
    second = await r.stop([], "done", stop_hook_active=True)
    assert second.decision == "continue"
    prevent = await runner(tmp_path, Stop=[cmd("stop_prevent.sh")]).stop([], "x")
    assert (prevent.decision, prevent.message) == ("prevent", "budget exhausted")


async def test_as_stop_hook_and_subagent_stop(tmp_path: Path) -> None:
    r = runner(tmp_path, SubagentStop=[cmd("block_exit2.sh")])
    hook = r.as_stop_hook(subagent=True)
    result = await hook(StopHookInput(messages=[], last_assistant_text="x", stop_hook_active=False))
    assert result is not None and result.decision == "block"
    main_stop = await r.as_stop_hook()(StopHookInput([], "x", False))
    assert main_stop is not None and main_stop.decision == "continue"


async def test_user_prompt_submit(tmp_path: Path) -> None:
    blocked = await runner(tmp_path, UserPromptSubmit=[cmd("block_exit2.sh")]).user_prompt_submit(
        "hi"
    )
    assert blocked.blocked and "tests must pass" in blocked.reason

    def add_context(event: dict[str, Any]) -> dict[str, Any]:
        return {"hookSpecificOutput": {"additionalContext": f"prompt was {event['prompt']!r}"}}

    outcome = await runner(tmp_path, UserPromptSubmit=[add_context]).user_prompt_submit("hi")
    assert not outcome.blocked and outcome.additional_context == "prompt was 'hi'"


async def test_session_start_plain_stdout_is_context(tmp_path: Path) -> None:
    hook = CommandHook("cat > /dev/null; echo 'branch: main'")
    r = runner(tmp_path, SessionStart=[HookMatcher("startup", [hook])])
    assert (await r.session_start("startup")).additional_context == "branch: main"
    assert (await r.session_start("resume")).additional_context is None


async def test_pre_compact(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    async def hook(event: dict[str, Any]) -> None:
        seen.append(event)

    r = runner(tmp_path, PreCompact=[HookMatcher("manual", [hook])])
    outcome = await r.pre_compact("manual", "keep the todo list")
    assert not outcome.blocked
    assert seen[0]["trigger"] == "manual" and seen[0]["custom_instructions"] == "keep the todo list"
    await r.pre_compact("auto")
    assert len(seen) == 1


async def test_python_callables_sync_async_and_broken(tmp_path: Path) -> None:
    warnings: list[HookWarning] = []

    def deny(event: dict[str, Any]) -> dict[str, Any]:
        return {
            "hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "py"}
        }

    async def crash(event: dict[str, Any]) -> None:
        raise ValueError("bug in hook")

    async def slow(event: dict[str, Any]) -> None:
        await asyncio.sleep(30)

    def wrong(event: dict[str, Any]) -> int:
        return 3

    from queryloop.hooks import CallableHook

    # `wrong` returns what no hook may: the runner reports it and goes on.
    wrong_hook: Any = wrong
    r = runner(
        tmp_path,
        warnings,
        PreToolUse=[
            HookMatcher("Bash", [deny, crash, CallableHook(slow, timeout=0.2), wrong_hook])
        ],
    )
    outcome = await pre(r, tmp_path)
    assert outcome.decision == "deny" and outcome.reason == "py"
    text = " | ".join(w.message for w in warnings)
    assert "ValueError: bug in hook" in text and "timed out" in text and "returned int" in text


async def test_continue_false_sets_stop_reason(tmp_path: Path) -> None:
    warnings: list[HookWarning] = []

    def stop_all(event: dict[str, Any]) -> dict[str, Any]:
        return {"continue": False, "stopReason": "enough", "systemMessage": "quota reached"}

    outcome = await pre(runner(tmp_path, warnings, PreToolUse=[stop_all]), tmp_path)
    assert outcome.stop_reason == "enough"
    assert [w.message for w in warnings] == ["quota reached"]
