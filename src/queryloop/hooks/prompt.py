"""Running one `prompt` hook: a small model reads the event and answers `{"ok", "reason"}`.

`$ARGUMENTS` in the hook's prompt becomes the event JSON (`\\$` writes a literal `$`); without
it the JSON is appended. The model's answer is turned into the output a command hook would
print for that event, following Claude Code's per-event table for `ok: false`
(https://code.claude.com/docs/en/hooks, "Response schema"): Stop and SubagentStop go on with
the reason (unless `impossible`), PreToolUse denies, PostToolUse and PreToolUse end the turn
unless `continueOnBlock`, PostToolBatch and UserPromptSubmit block, PostToolUseFailure and
TaskCreated/TaskCompleted return the reason to the model, PermissionRequest and
PermissionDenied ignore it. The request goes through the session's provider (`PromptModel`,
built by the agent layer), so it is metered like every other side request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

from .config import PromptHook
from .events import HookEvent
from .shell import HookRun

PromptModel: TypeAlias = Callable[[str, str, "str | None"], Awaitable[str]]
"""`ask(system, prompt, model)` → the model's text; `model` None: the session's fast model."""

SYSTEM = (
    "You evaluate a condition for a coding agent's hook. You get the hook's instructions and "
    'the event as JSON. Reply with one JSON object and nothing else: {"ok": true} when the '
    'condition holds, or {"ok": false, "reason": "why, in one sentence"} when it does '
    'not (add "impossible": true if it can never hold).'
)


def render_prompt(template: str, payload: Mapping[str, Any]) -> str:
    """The prompt with `$ARGUMENTS` replaced by the event JSON (appended when absent)."""
    data = json.dumps(payload, default=str, ensure_ascii=False)
    if "$ARGUMENTS" not in template.replace("\\$", ""):
        return f"{template.replace(chr(92) + '$', '$')}\n\n{data}"
    parts = re.split(r"(\\\$|\$ARGUMENTS)", template)
    return "".join(data if p == "$ARGUMENTS" else "$" if p == "\\$" else p for p in parts)


async def run_prompt_hook(
    hook: PromptHook, payload: Mapping[str, Any], event: HookEvent, ask: PromptModel | None
) -> HookRun:
    """Ask the model; the run's `output` is the equivalent command-hook output."""
    if ask is None:
        return HookRun(hook.label, None, error="no model is configured for prompt hooks")
    reply = await ask(SYSTEM, render_prompt(hook.prompt, payload), hook.model)
    answer = parse_answer(reply)
    if answer is None:
        return HookRun(
            hook.label, None, error=f'the model did not answer {{"ok": ...}}: {reply[:200]!r}'
        )
    if answer.get("ok") is True:
        return HookRun(hook.label, 0, output={})
    reason = str(answer.get("reason") or "the prompt hook's condition is not met")
    return HookRun(hook.label, 0, output=blocked_output(event, reason, hook, answer))


def parse_answer(text: str) -> Mapping[str, Any] | None:
    """The JSON object in the reply (code fences and text around it tolerated)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None
    if not isinstance(value, Mapping) or not isinstance(value.get("ok"), bool):
        return None
    return value


def blocked_output(
    event: HookEvent, reason: str, hook: PromptHook, answer: Mapping[str, Any]
) -> dict[str, Any]:
    """What `ok: false` means on `event`, as command-hook output."""
    if event in (HookEvent.STOP, HookEvent.SUBAGENT_STOP):
        return {} if answer.get("impossible") is True else {"decision": "block", "reason": reason}
    if event is HookEvent.PRE_TOOL_USE:
        deny = {"hookSpecificOutput": {"permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}  # fmt: skip
        return deny if hook.continue_on_block else {**deny, "continue": False, "stopReason": reason}
    if event is HookEvent.POST_TOOL_USE and not hook.continue_on_block:
        return {"continue": False, "stopReason": reason}
    if event in (HookEvent.PERMISSION_REQUEST, HookEvent.PERMISSION_DENIED):
        return {}
    return {"decision": "block", "reason": reason}
