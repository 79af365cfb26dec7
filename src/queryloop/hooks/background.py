"""Claude Code's async hook protocol, as data: the first-line answer and the late answer.

A command hook may answer `{"async": true, "asyncTimeout": N}` as the first line of its
stdout (Claude Code's `AsyncHookJSONOutput`, the Agent SDK's "Asynchronous output"): the
event goes on without it, and the hook keeps running in the background for at most N ms
(15 s when N is missing or not a positive number: Claude Code's `AsyncHookRegistry`). When it
ends, its answer is the first line of its stdout that is a JSON object without an `async`
key; its `systemMessage` and `additionalContext` reach the model on the next turn, and its
decisions come too late to matter (hooks reference, "Run hooks in the background"). A hook
marked `"async": true` in its settings entry is answered the same way when it ends.

Pure functions: `hooks.shell` watches the first line, `hooks.machinery` delivers the rest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

DEFAULT_ASYNC_TIMEOUT = 15.0
"""Seconds a hook that answered `{"async": true}` without a usable `asyncTimeout` may run."""
MAX_ASYNC_TIMEOUT = (2**31 - 1) / 1000
"""Claude Code clamps `asyncTimeout` to the largest timer delay (about 24.8 days)."""


def async_answer(first_line: str) -> float | None:
    """Seconds the hook may go on in the background when `first_line` is Claude Code's
    async answer; None when it is anything else (the hook is waited for as usual)."""
    try:
        value = json.loads(first_line)
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("async") is not True:
        return None
    asked = value.get("asyncTimeout")
    if isinstance(asked, int | float) and not isinstance(asked, bool) and asked > 0:
        return min(asked / 1000, MAX_ASYNC_TIMEOUT)
    return DEFAULT_ASYNC_TIMEOUT


def late_answer(stdout: str) -> Mapping[str, Any]:
    """The answer of a background hook that ended: its whole stdout when that is one JSON
    object (a pretty-printed one too), else its first line that is a JSON object without
    `async` (Claude Code's rule); empty when there is none."""
    whole = _object(stdout.strip())
    if whole is not None and "async" not in whole:
        return whole
    for line in stdout.splitlines():
        found = _object(line.strip()) if line.strip().startswith("{") else None
        if found is not None and "async" not in found:
            return found
    return {}


def late_context(answer: Mapping[str, Any]) -> str | None:
    """What reaches the model from a late answer: its `systemMessage` and its
    `hookSpecificOutput.additionalContext` (Claude Code shows neither to the user)."""
    specific = answer.get("hookSpecificOutput")
    context = specific.get("additionalContext") if isinstance(specific, Mapping) else None
    parts = [p for p in (answer.get("systemMessage"), context) if isinstance(p, str) and p]
    return "\n".join(parts) or None


def _object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
