"""Claude Code settings files with today's hook fields load, keep every field that changes
what a hook does, and never fail closed for what Claude Code accepts (issue 22)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from queryloop.config import load_settings
from queryloop.hooks import CommandHook, HookEvent, HttpHook, PromptHook
from queryloop.hooks.config import compile_matcher

# Shapes seen in public repositories' .claude/settings.json (issue 22's survey): exec-form
# args, `if` filters, statusMessage, http and agent handlers, newer events.
REAL_WORLD: dict[str, Any] = {
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Write|Edit",
                "hooks": [
                    {
                        "type": "command",
                        "command": "python3",
                        "args": ["${CLAUDE_PROJECT_DIR}/.claude/hooks/format.py", "--fix"],
                        "statusMessage": "Formatting...",
                        "timeout": 30,
                    }
                ],
            }
        ],
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "if": "Bash(git *)", "command": "./check-git.sh"},
                    {
                        "type": "http",
                        "url": "http://localhost:8080/hooks/pre-tool-use",
                        "headers": {"Authorization": "Bearer $MY_TOKEN"},
                        "allowedEnvVars": ["MY_TOKEN"],
                    },
                ],
            }
        ],
        "Stop": [{"hooks": [{"type": "agent", "prompt": "Verify the tests pass. $ARGUMENTS"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "echo bye", "async": True}]}],
        "PostToolUseFailure": [{"hooks": [{"type": "command", "command": "./on-fail.sh"}]}],
        "Notification": [
            {"matcher": "permission_prompt", "hooks": [{"type": "command", "command": "notify"}]}
        ],
        "PermissionRequest": [
            {"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "Is this safe? $ARGUMENTS"}]}
        ],
        "TeammateIdle": [{"hooks": [{"type": "command", "command": "true"}]}],
        "FileChanged": [{"matcher": ".envrc", "hooks": [{"type": "command", "command": "true"}]}],
        "StopFailure": [{"hooks": [{"type": "command", "command": "true", "shell": "bash"}]}],
    }
}


def _load(tmp_path: Path, data: Any) -> Any:
    project = tmp_path / "repo"
    (project / ".queryloop").mkdir(parents=True)
    (project / ".queryloop/settings.json").write_text(json.dumps(data, indent=2))
    return load_settings(project, user_home=tmp_path / "home", trusted=True)


def test_real_world_hooks_load_without_failing_closed(tmp_path: Path) -> None:
    s = _load(tmp_path, REAL_WORLD)
    assert s.errors == ()
    hooks = s.hooks
    post = hooks.hooks_for(HookEvent.POST_TOOL_USE, "Edit")
    assert isinstance(post[0], CommandHook)
    assert post[0].command == "python3"
    assert post[0].args == ("${CLAUDE_PROJECT_DIR}/.claude/hooks/format.py", "--fix")
    assert post[0].status_message == "Formatting..." and post[0].timeout == 30
    pre = hooks.hooks_for(HookEvent.PRE_TOOL_USE, "Bash")
    assert isinstance(pre[0], CommandHook) and str(pre[0].condition) == "Bash(git *)"
    assert isinstance(pre[1], HttpHook) and pre[1].allowed_env_vars == ("MY_TOKEN",)
    session_end = hooks.hooks_for(HookEvent.SESSION_END, "other")
    assert isinstance(session_end[0], CommandHook) and session_end[0].run_async
    assert hooks.hooks_for(HookEvent.POST_TOOL_USE_FAILURE, "Bash")
    assert hooks.hooks_for(HookEvent.NOTIFICATION, "permission_prompt")
    assert not hooks.hooks_for(HookEvent.NOTIFICATION, "idle_prompt")
    assert isinstance(hooks.hooks_for(HookEvent.PERMISSION_REQUEST, "Bash")[0], PromptHook)
    warnings = [p.message for p in s.problems if not p.is_error]
    # each unsupported thing is named, once
    for needle in ("'agent' hooks are not supported", "'TeammateIdle' is not fired",
                   "'FileChanged' is not fired"):  # fmt: skip
        assert sum(needle in w for w in warnings) == 1, (needle, warnings)
    assert not hooks.hooks_for(HookEvent.STOP)  # the agent handler was skipped, with a word


def test_unknown_fields_and_events_are_named(tmp_path: Path) -> None:
    s = _load(
        tmp_path,
        {
            "hooks": {
                "NotAnEvent": [],
                "Stop": [{"hooks": [{"type": "command", "command": "true", "colour": "red"}]}],
                "SessionStart": [{"hooks": [{"type": "http", "url": "http://127.0.0.1:9/x"}]}],
                "UserPromptSubmit": [
                    {"hooks": [{"type": "command", "command": "true", "if": "Bash(git *)"}]}
                ],
            }
        },
    )
    assert s.errors == ()
    text = "\n".join(p.message for p in s.problems)
    assert "unknown hook event 'NotAnEvent'" in text
    assert "unknown field 'colour'" in text
    assert "SessionStart runs command hooks only" in text
    assert "'if' is evaluated on tool events only" in text


@pytest.mark.parametrize(
    "handler, message",
    [
        ({"type": "command"}, "'command' must be a non-empty string"),
        ({"type": "command", "command": "x", "args": "a b"}, "'args' must be a list"),
        ({"type": "command", "command": "x", "timeout": -1}, "'timeout' must be a positive"),
        ({"type": "http", "url": "file:///etc/passwd"}, "'url' must be an http"),
        ({"type": "prompt"}, "'prompt' must be a non-empty string"),
        ({"type": "webhook", "url": "http://x"}, "unknown hook type 'webhook'"),
    ],
)
def test_values_claude_code_rejects_still_fail_closed(
    tmp_path: Path, handler: dict[str, Any], message: str
) -> None:
    s = _load(tmp_path, {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}})
    assert any(message in p.message for p in s.errors), s.problems


def test_matchers_follow_claude_code() -> None:
    def selects(matcher: str, target: str) -> bool:
        test = compile_matcher(matcher)
        return test is None or test(target)

    assert selects("Edit, Write", "Write") and not selects("Edit|Write", "NotebookEdit")
    assert selects("code-reviewer", "code-reviewer")
    assert not selects("code-reviewer", "senior-code-reviewer")
    assert selects("Edit.*", "NotebookEdit")  # regex path: unanchored, like JavaScript's test
    assert selects("^Notebook", "NotebookEdit") and not selects("^Notebook", "Edit")
    assert not selects("mcp__memory", "mcp__memory__create")  # exact: needs `.*`
    assert selects("mcp__memory__.*", "mcp__memory__create")
