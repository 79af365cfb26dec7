"""Claude Code's async hook protocol: a command hook whose first stdout line is
`{"async": true, "asyncTimeout": N}` goes on in the background (bounded by N ms) while the
session continues; its later JSON reaches the model on the next turn; it is killed when the
session ends. Real processes, the real Agent and the real command against the local server;
ordering is asserted (the request arrives before the hook's marker), never elapsed time."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from agent_support import agent_on, messages_json
from queryloop.hooks import CommandHook, HookMatcher, HookRunner, HooksConfig
from queryloop.testing import MessagesServer, text, turn

WAIT = "i=0; while [ ! -e {gate} ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done"
"""Waits for the test to open the gate, at most 10 s (so a run that waits for the hook,
as before the protocol was understood, still ends and fails its assertions)."""


def async_hook(tmp_path: Path, *, async_timeout: int = 180000, late: str = "") -> str:
    """A SessionStart hook: records its pid, answers async on its first line, waits for
    `gate`, touches `marker` and prints `late` (its real answer)."""
    pid, gate, marker = tmp_path / "hook.pid", tmp_path / "gate", tmp_path / "marker"
    first = json.dumps({"async": True, "asyncTimeout": async_timeout})
    return (
        f"cat > /dev/null; echo $$ > {pid}; echo '{first}'; {WAIT.format(gate=gate)}; "
        f"touch {marker}; echo '{late}'"
    )


LATE = json.dumps({
    "systemMessage": "LATE-SYSTEM",
    "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "LATE-CONTEXT"},
})  # fmt: skip


def alive(pid_file: Path) -> bool:
    """Is the process whose pid the hook wrote still running (a zombie counts as gone)?"""
    pid = int(pid_file.read_text())
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


async def until(condition: Any) -> None:
    for _ in range(800):
        if condition():
            return
        await asyncio.sleep(0.025)
    raise AssertionError("the condition never held")


async def test_an_async_session_start_hook_does_not_hold_the_first_request(
    tmp_path: Path, home: Path
) -> None:
    marker = tmp_path / "marker"
    marker_seen: list[bool] = []

    def model(body: dict[str, Any]) -> Any:
        marker_seen.append(marker.exists())
        return turn(text("ok"))

    notices: list[str] = []
    hook = CommandHook(async_hook(tmp_path, late=LATE))
    with MessagesServer(model) as server:
        agent = agent_on(
            server, tmp_path, home, hooks={"SessionStart": [hook]}, on_notice=notices.append
        )
        await agent.run("one")
        assert marker_seen == [False]  # the request came while the hook still ran
        assert alive(tmp_path / "hook.pid")
        (tmp_path / "gate").touch()
        await until(lambda: not alive(tmp_path / "hook.pid"))
        runtime = agent._state.runtime
        assert runtime is not None
        await until(lambda: bool(runtime.hooks._async_context))  # the hook's answer was read
        await agent.run("two")
        await agent.aclose()
        second = messages_json(server.requests[1])
    # Claude Code delivers both fields to the model on the next turn, and shows neither.
    assert "LATE-CONTEXT" in second and "LATE-SYSTEM" in second
    assert "LATE-CONTEXT" not in messages_json(server.requests[0])
    assert not [n for n in notices if "invalid JSON" in n or "LATE-" in n], notices


async def test_async_timeout_bounds_the_background_hook(tmp_path: Path) -> None:
    warnings: list[Any] = []
    hook = CommandHook(async_hook(tmp_path, async_timeout=300, late=LATE), timeout=5)
    runner = HookRunner(
        HooksConfig.of(SessionStart=[HookMatcher("", [hook])]), cwd=tmp_path, session_id="s",
        on_warning=warnings.append,
    )  # fmt: skip
    outcome = await runner.session_start()
    assert outcome.additional_context is None and not outcome.blocked
    assert alive(tmp_path / "hook.pid")  # answered at once; still running
    await until(lambda: not alive(tmp_path / "hook.pid"))  # killed at 300 ms, gate never opened
    assert not (tmp_path / "marker").exists()
    await until(lambda: bool(warnings))
    assert "asyncTimeout" in warnings[0].message
    await runner.aclose()


async def test_the_background_hook_is_killed_when_the_session_ends(tmp_path: Path) -> None:
    warnings: list[Any] = []
    hook = CommandHook(async_hook(tmp_path, late=LATE), timeout=5)
    runner = HookRunner(
        HooksConfig.of(SessionStart=[HookMatcher("", [hook])]), cwd=tmp_path, session_id="s",
        on_warning=warnings.append,
    )  # fmt: skip
    await runner.session_start()
    assert alive(tmp_path / "hook.pid")
    await runner.aclose()  # Claude Code -p: killed at teardown, outcome cancelled
    assert not alive(tmp_path / "hook.pid")
    assert not (tmp_path / "marker").exists() and warnings == []


async def test_a_hook_that_answers_async_and_ends_at_once_is_still_one_answer(
    tmp_path: Path,
) -> None:
    # Both lines arrive together: the first still decides, the second is the late answer.
    first = json.dumps({"async": True})
    hook = CommandHook(f"cat > /dev/null; echo '{first}'; echo '{LATE}'")
    warnings: list[Any] = []
    runner = HookRunner(
        HooksConfig.of(UserPromptSubmit=[HookMatcher("", [hook])]), cwd=tmp_path, session_id="s",
        on_warning=warnings.append,
    )  # fmt: skip
    now = await runner.user_prompt_submit("hi")
    assert now.additional_context is None and not now.blocked
    await until(lambda: bool(runner._async_context))
    later = await runner.user_prompt_submit("again")
    assert later.additional_context is not None and "LATE-CONTEXT" in later.additional_context
    assert warnings == []
    await runner.aclose()


def test_print_mode_starts_at_once_with_an_async_session_start_hook(tmp_path: Path) -> None:
    """The reported case: `-p` with such a hook in `.claude/settings.json` waited for it and
    printed "invalid JSON (Extra data)"."""
    proj = tmp_path / "proj"
    (proj / ".claude").mkdir(parents=True)
    hook = {"type": "command", "command": async_hook(tmp_path, late=LATE)}
    settings = {"hooks": {"SessionStart": [{"hooks": [hook]}]}}
    (proj / ".claude/settings.json").write_text(json.dumps(settings))
    marker = tmp_path / "marker"
    marker_seen: list[bool] = []

    def model(body: dict[str, Any]) -> Any:
        marker_seen.append(marker.exists())
        return turn(text("answered"))

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.pop("QUERYLOOP_MODEL", None)
    with MessagesServer(model) as server:
        env.update(ANTHROPIC_BASE_URL=server.base_url, ANTHROPIC_API_KEY="test-key")
        done = subprocess.run(
            [sys.executable, "-m", "queryloop.cli.main", "-p", "hi", "--trust"],
            cwd=proj, env=env, capture_output=True, text=True, timeout=90,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "answered"
    assert marker_seen == [False]
    assert "invalid JSON" not in done.stderr and "hook" not in done.stderr, done.stderr
    assert not alive(tmp_path / "hook.pid") and not marker.exists()  # killed at teardown
