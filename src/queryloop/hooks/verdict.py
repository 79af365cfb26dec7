"""What one hook run said, by Claude Code's rules for exit codes and JSON output.

https://code.claude.com/docs/en/hooks ("Exit code output", "JSON output", "Exit code 2
behavior per event"): stdout that starts with `{` is parsed as JSON on every exit code; exit
2 blocks where the event can be blocked (stderr is the message, unless the JSON gives a
reason), is shown to the user where it cannot, and is ignored where the event discards its
output; any other non-zero exit is a non-blocking error unless the JSON is a valid object,
which then decides alone. Pure functions: the runner reports the warnings they return.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .events import HookEvent
from .shell import HookRun

E = HookEvent

EXIT2_BLOCKS = frozenset({
    E.PRE_TOOL_USE, E.USER_PROMPT_SUBMIT, E.USER_PROMPT_EXPANSION, E.STOP, E.SUBAGENT_STOP,
    E.TASK_CREATED, E.TASK_COMPLETED, E.CONFIG_CHANGE, E.POST_TOOL_USE, E.POST_TOOL_USE_FAILURE,
    E.POST_TOOL_BATCH, E.PRE_COMPACT,
})  # fmt: skip
"""Where exit 2 blocks (for PostToolUse/Failure: stderr goes to the model, the tool ran)."""
EXIT2_IGNORED = frozenset({
    E.PERMISSION_REQUEST, E.PERMISSION_DENIED, E.NOTIFICATION, E.STOP_FAILURE,
    E.INSTRUCTIONS_LOADED,
})  # fmt: skip
"""Where exit 2 and its stderr are ignored; elsewhere its stderr is shown to the user."""
OUTPUT_IGNORED = frozenset({E.STOP_FAILURE, E.INSTRUCTIONS_LOADED, E.SESSION_END, E.NOTIFICATION})
"""Events whose JSON output Claude Code discards."""
CONTINUE_IGNORED = frozenset({
    E.PRE_COMPACT, E.POST_COMPACT, E.CONFIG_CHANGE, E.CWD_CHANGED, E.TASK_CREATED,
    *OUTPUT_IGNORED,
})  # fmt: skip
"""Events that discard `continue: false`."""
SYSTEM_MESSAGE_IGNORED = frozenset(
    {E.PRE_COMPACT, E.POST_COMPACT, E.CONFIG_CHANGE, *OUTPUT_IGNORED}
)
PLAIN_TEXT_IS_CONTEXT = frozenset(
    {E.USER_PROMPT_SUBMIT, E.USER_PROMPT_EXPANSION, E.SESSION_START, E.PRE_COMPACT}
)
"""Events whose plain stdout on exit 0 is context (PreCompact: extra summary instructions)."""


@dataclass
class Verdict:
    """One hook's output, normalised."""

    block: str | None = None
    decision: Literal["allow", "deny", "ask", "defer"] | None = None
    reason: str = ""
    label: str = ""
    """The hook that gave it (its command, URL or callable's name)."""
    updated_input: Mapping[str, Any] | None = None
    context: str | None = None
    stop: str | None = None
    system_message: str | None = None
    specific: Mapping[str, Any] = field(default_factory=dict)
    """`hookSpecificOutput` as given (event-specific fields the runner reads)."""


@dataclass
class Merged:
    """The verdicts of every hook that ran for one event, in configuration order."""

    verdicts: list[Verdict] = field(default_factory=list)

    def blocks(self) -> list[str]:
        """The block messages."""
        return [v.block for v in self.verdicts if v.block is not None]

    def contexts(self) -> str | None:
        """Every hook's additional context, joined."""
        parts = [v.context for v in self.verdicts if v.context]
        return "\n".join(parts) if parts else None

    def stop(self) -> str | None:
        """The first `continue: false` reason."""
        return next((v.stop for v in self.verdicts if v.stop is not None), None)


def interpret(event: HookEvent, run: HookRun) -> tuple[Verdict, list[str]]:
    """The verdict of one run and the warnings to show the user."""
    if run.error is not None:
        return Verdict(), [run.error]
    output, warnings = _output(event, run)
    if event in OUTPUT_IGNORED:
        return Verdict(), warnings
    verdict = from_json(output, event) if isinstance(output, Mapping) else Verdict()
    if isinstance(output, str) and run.exit_code == 0 and event in PLAIN_TEXT_IS_CONTEXT:
        verdict.context = output
    if run.exit_code == 2 and event in EXIT2_BLOCKS:
        # the JSON's own blocking reason, else stderr (Claude Code's rule)
        verdict.block = verdict.block or run.stderr.strip() or f"blocked by hook {run.label}"
    elif run.exit_code == 2 and event not in EXIT2_IGNORED:
        warnings.append(f"exited with status 2: {run.stderr.strip()[:500] or 'no output'}")
    elif run.exit_code not in (0, 2) and not isinstance(output, Mapping):
        detail = run.stderr.strip() or run.stdout.strip() or "no output"
        warnings.append(f"exited with status {run.exit_code}: {detail[:500]}")
    if verdict.system_message and event not in SYSTEM_MESSAGE_IGNORED:
        warnings.append(verdict.system_message)
    if event in CONTINUE_IGNORED:
        verdict.stop = None
    return verdict, warnings


def _output(event: HookEvent, run: HookRun) -> tuple[Mapping[str, Any] | str | None, list[str]]:
    """The run's output: a callable's dict, stdout's JSON object, or its plain text."""
    if run.output is not None:
        return run.output, []
    text = run.stdout.strip()
    if not text:
        return None, []
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return None, [f"printed invalid JSON ({exc.msg}); its output was ignored"]
        if isinstance(value, Mapping):
            return value, []
    return text, []  # plain text: context where the event takes it, else only logged


def from_json(output: Mapping[str, Any], event: HookEvent) -> Verdict:
    """Claude Code's JSON output fields (current and legacy).

    `decision: "block"` blocks (for PreToolUse: denies, the legacy form); `"approve"` is the
    legacy PreToolUse allow.
    """
    specific = output.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    verdict = Verdict(reason=str(output.get("reason") or ""), specific=specific)
    if output.get("continue") is False:
        verdict.stop = str(output.get("stopReason") or "a hook stopped the session")
    message = output.get("systemMessage")
    if isinstance(message, str) and message:
        verdict.system_message = message
    decision = output.get("decision")
    if decision == "block":
        verdict.block = verdict.reason or "blocked by a hook"
    elif decision == "approve":
        verdict.decision = "allow"
    permission = specific.get("permissionDecision")
    if permission in ("allow", "deny", "ask", "defer"):
        verdict.decision = permission
        verdict.reason = str(specific.get("permissionDecisionReason") or verdict.reason)
    updated = specific.get("updatedInput")
    if isinstance(updated, Mapping):
        verdict.updated_input = dict(updated)
    context = specific.get("additionalContext")
    if isinstance(context, str) and context:
        verdict.context = context
    return verdict
