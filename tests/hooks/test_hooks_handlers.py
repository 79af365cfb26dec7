"""Handler types and fields with real processes, a real HTTP endpoint on 127.0.0.1 and a
scripted model: exec-form `args`, a program that cannot start, `timeout`, `if`, `once`,
`statusMessage`, `async`, `http`, `prompt`."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from queryloop.config.hook_conditions import RuleCondition
from queryloop.hooks import (
    CommandHook,
    HookMatcher,
    HookRunner,
    HooksConfig,
    HookStatus,
    HookWarning,
    HttpHook,
    PromptHook,
)
from queryloop.testing import ScriptedProvider
from queryloop.tools.base import ToolContext


def runner(tmp_path: Path, warnings: list[HookWarning] | None = None, **kw: Any) -> Any:
    def make(**events: Any) -> HookRunner:
        return HookRunner(
            HooksConfig.of(**events),
            cwd=tmp_path,
            session_id="sess-1",
            env={"HOOK_OUT": str(tmp_path / "out.json"), "MY_TOKEN": "s3cret", "OTHER": "leak"},
            on_warning=None if warnings is None else warnings.append,
            **kw,
        )

    return make


async def pre(r: HookRunner, tmp_path: Path, command: str = "ls", tool: str = "Bash") -> Any:
    return await r.pre_tool_use(tool, {"command": command}, "toolu_1", ToolContext(cwd=tmp_path))


DENY = (
    "import json,sys; json.load(sys.stdin); print(json.dumps({'hookSpecificOutput': "
    "{'permissionDecision': 'deny', 'permissionDecisionReason': ' '.join(sys.argv[1:])}}))"
)


async def test_exec_form_args_run_without_a_shell(tmp_path: Path) -> None:
    # In shell form `$(touch pwned)` and `;` would run; in exec form they are one argument.
    hook = CommandHook(
        sys.executable, args=("-c", DENY, "$(touch pwned); echo", "${CLAUDE_PROJECT_DIR}")
    )
    outcome = await pre(runner(tmp_path)(PreToolUse=[hook]), tmp_path)
    assert outcome.decision == "deny"
    assert outcome.reason == f"$(touch pwned); echo {tmp_path}"  # placeholder substituted
    assert not (tmp_path / "pwned").exists()
    shell = CommandHook(f'{sys.executable} -c "{DENY}" $(touch pwned)')
    await pre(runner(tmp_path)(PreToolUse=[shell]), tmp_path)
    assert (tmp_path / "pwned").exists()  # the difference the shell makes


async def test_a_program_that_cannot_start_is_a_non_blocking_error(tmp_path: Path) -> None:
    warnings: list[HookWarning] = []
    make = runner(tmp_path, warnings)
    exec_form = CommandHook("/nonexistent/hook-binary", args=())
    assert (await pre(make(PreToolUse=[exec_form]), tmp_path)).decision is None
    assert "could not start" in warnings[-1].message
    shell_form = CommandHook("/nonexistent/hook.sh")
    assert (await pre(make(PreToolUse=[shell_form]), tmp_path)).decision is None
    assert "status 127" in warnings[-1].message


async def test_if_filters_with_the_permission_rule_matcher(tmp_path: Path) -> None:
    seen = tmp_path / "seen"
    hook = CommandHook(
        f"cat >> {seen}; echo >> {seen}", condition=RuleCondition.parse("Bash(git *)")
    )
    r = runner(tmp_path)(PreToolUse=[HookMatcher("Bash", [hook])])
    for command in ("npm test", "npm test && git push", "FOO=1 git status", "echo $(rm -rf /)"):
        await pre(r, tmp_path, command)
    commands = [json.loads(x)["tool_input"]["command"] for x in seen.read_text().splitlines() if x]
    assert commands == ["npm test && git push", "FOO=1 git status"]
    edit = CommandHook(f"cat >> {seen}.edit", condition=RuleCondition.parse("Edit(*.ts)"))
    r2 = runner(tmp_path)(PreToolUse=[edit])
    ctx = ToolContext(cwd=tmp_path)
    await r2.pre_tool_use("Edit", {"file_path": "a.py"}, "t", ctx)
    assert not Path(f"{seen}.edit").exists()
    await r2.pre_tool_use("Edit", {"file_path": "a.ts"}, "t", ctx)
    assert Path(f"{seen}.edit").exists()


async def test_once_fires_once(tmp_path: Path) -> None:
    count = tmp_path / "count"
    r = runner(tmp_path)(PreToolUse=[CommandHook(f"echo x >> {count}", once=True)])
    for _ in range(3):
        await pre(r, tmp_path)
    assert count.read_text().splitlines() == ["x"]
    # a call its `if` does not select does not use up a `once`
    gated = tmp_path / "gated"
    hook = CommandHook(
        f"echo y >> {gated}", once=True, condition=RuleCondition.parse("Bash(git *)")
    )
    r2 = runner(tmp_path)(PreToolUse=[hook])
    for command in ("ls", "git status", "git push"):
        await pre(r2, tmp_path, command)
    assert gated.read_text().splitlines() == ["y"]


async def test_timeout_kills_and_renders_no_decision(tmp_path: Path) -> None:
    warnings: list[HookWarning] = []
    hook = CommandHook('sleep 30; echo \'{"decision": "block"}\'', timeout=0.3)
    outcome = await pre(runner(tmp_path, warnings)(PreToolUse=[hook]), tmp_path)
    assert outcome.decision is None and "timed out after 0.3s" in warnings[0].message


async def test_status_message_is_reported_while_the_hook_runs(tmp_path: Path) -> None:
    statuses: list[HookStatus] = []
    hook = CommandHook("cat > /dev/null", status_message="Checking the command...")
    await pre(runner(tmp_path, on_status=statuses.append)(PreToolUse=[hook]), tmp_path)
    assert [(s.message, s.running) for s in statuses] == [
        ("Checking the command...", True),
        ("Checking the command...", False),
    ]


async def test_async_hook_runs_in_the_background_and_its_context_comes_later(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    script = (
        f"cat > /dev/null; while [ ! -e {gate} ]; do sleep 0.05; done; "
        'echo \'{"decision": "block", "hookSpecificOutput": {"additionalContext": "lint ok"}}\''
    )
    r = runner(tmp_path)(PostToolBatch=[CommandHook(script, run_async=True)])
    first = await r.post_tool_batch([])  # returns while the hook still waits for the gate
    assert not first.blocked and first.additional_context is None
    gate.touch()
    for _ in range(400):
        if r._async_context:
            break
        await asyncio.sleep(0.025)
    second = await r.post_tool_batch([])
    assert second.additional_context == "lint ok" and not second.blocked
    await r.aclose()


# ---- http ---------------------------------------------------------------------------------


class _Endpoint(BaseHTTPRequestHandler):
    requests: ClassVar[list[tuple[str, dict[str, str], Any]]] = []
    answer: ClassVar[tuple[int, str]] = (200, "")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        type(self).requests.append((self.path, dict(self.headers), json.loads(body)))
        status, text = type(self).answer
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(text.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[tuple[str, type[_Endpoint]]]:
    handler = type("Endpoint", (_Endpoint,), {"requests": [], "answer": (200, "")})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", handler
    finally:
        server.shutdown()
        server.server_close()


async def test_http_hook_posts_the_event_and_its_json_decides(
    tmp_path: Path, endpoint: tuple[str, type[_Endpoint]]
) -> None:
    url, handler = endpoint
    decision = {"permissionDecision": "deny", "permissionDecisionReason": "from the service"}
    handler.answer = (200, json.dumps({"hookSpecificOutput": decision}))
    hook = HttpHook(
        f"{url}/hooks/pre",
        headers={"Authorization": "Bearer $MY_TOKEN", "X-Other": "${OTHER}"},
        allowed_env_vars=("MY_TOKEN",),
    )
    outcome = await pre(runner(tmp_path)(PreToolUse=[hook]), tmp_path, "rm -rf x")
    assert (outcome.decision, outcome.reason) == ("deny", "from the service")
    path, headers, body = handler.requests[0]
    assert path == "/hooks/pre" and body["tool_input"] == {"command": "rm -rf x"}
    assert body["hook_event_name"] == "PreToolUse"
    assert headers["Authorization"] == "Bearer s3cret"
    assert headers["X-Other"] == ""  # not allowed: never interpolated


@pytest.mark.parametrize("answer", [(500, "{}"), (200, "not json"), (403, "")])
async def test_http_failures_are_non_blocking(
    tmp_path: Path, endpoint: tuple[str, type[_Endpoint]], answer: tuple[int, str]
) -> None:
    url, handler = endpoint
    handler.answer = answer
    warnings: list[HookWarning] = []
    outcome = await pre(runner(tmp_path, warnings)(PreToolUse=[HttpHook(url)]), tmp_path)
    assert outcome.decision is None and len(warnings) == 1


async def test_http_connection_refused_is_non_blocking(tmp_path: Path) -> None:
    warnings: list[HookWarning] = []
    hook = HttpHook("http://127.0.0.1:9/nothing-listens")
    assert (await pre(runner(tmp_path, warnings)(PreToolUse=[hook]), tmp_path)).decision is None
    assert "request failed" in warnings[0].message


# ---- prompt -------------------------------------------------------------------------------


async def test_prompt_hook_asks_the_model_with_arguments(tmp_path: Path) -> None:
    from queryloop.agent.hook_points import prompt_model

    provider = ScriptedProvider(
        ['{"ok": false, "reason": "rm is not allowed here"}', '{"ok": true}']
    )
    hook = PromptHook("Is this command safe? $ARGUMENTS", continue_on_block=True)
    r = runner(tmp_path, ask_model=prompt_model(provider, "fast-model"))(PreToolUse=[hook])
    denied = await pre(r, tmp_path, "rm -rf /")
    assert (denied.decision, denied.reason) == ("deny", "rm is not allowed here")
    assert denied.stop_reason is None  # continueOnBlock: the model gets the reason and goes on
    sent = provider.requests[0]
    assert sent.model == "fast-model"
    text = sent.messages[0]["content"][0]["text"]
    assert text.startswith("Is this command safe? {") and '"command": "rm -rf /"' in text
    assert (await pre(r, tmp_path, "ls")).decision is None


async def test_prompt_hook_on_stop_and_its_default_block(tmp_path: Path) -> None:
    from queryloop.agent.hook_points import prompt_model

    provider = ScriptedProvider(
        ['{"ok": false, "reason": "run the tests"}', '{"ok": false, "reason": "x"}', "garbage"]
    )
    warnings: list[HookWarning] = []
    make = runner(tmp_path, warnings, ask_model=prompt_model(provider, "fast"))
    stop = await make(Stop=[PromptHook("Done? $ARGUMENTS")]).stop([], "finished")
    assert (stop.decision, stop.message) == ("block", "run the tests")
    ended = await pre(make(PreToolUse=[PromptHook("Safe?")]), tmp_path)
    assert ended.decision == "deny" and ended.stop_reason == "x"  # default: the turn ends
    assert (await pre(make(PreToolUse=[PromptHook("Safe?")]), tmp_path)).decision is None
    assert "did not answer" in warnings[-1].message
