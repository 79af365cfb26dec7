"""The SDK's Python callbacks as queryloop's: hooks (`HookMatcher` callbacks) and
`can_use_tool`.

Both sides speak Claude Code's shapes already (a hook gets the event JSON and returns
Claude Code's hook output; a permission callback decides one call), so the adapters only
change the call signature and a few spellings: `continue_`/`async_` become `continue`/
`async`, `PermissionResultAllow`/`Deny` become queryloop's `PermissionAllow`/`Deny`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..hooks import NOT_FIRED, HookEvent
from ..hooks.config import DEFAULT_HOOK_TIMEOUT, CallableHook
from ..hooks.config import HookMatcher as LoopHookMatcher
from ..permissions.checker import (
    PermissionAllow,
    PermissionDeny,
    PermissionRequest,
    PermissionResult,
)
from .errors import UnsupportedOptionError
from .hook_types import HookCallback, HookContext, HookMatcher
from .permission_types import (
    CanUseTool,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    ToolPermissionContext,
)

_KEYWORDS = {"continue_": "continue", "async_": "async"}


def loop_hooks(hooks: Mapping[str, Sequence[HookMatcher]]) -> dict[str, list[LoopHookMatcher]]:
    """`ClaudeAgentOptions.hooks` as `Agent(hooks=...)`; an event queryloop never fires (or
    does not know) is an `UnsupportedOptionError`, not a callback that never runs."""
    out: dict[str, list[LoopHookMatcher]] = {}
    for name, matchers in hooks.items():
        try:
            event = HookEvent(name)
        except ValueError:
            raise UnsupportedOptionError(f"hooks[{name!r}]", "no such hook event") from None
        if event in NOT_FIRED:
            raise UnsupportedOptionError(
                f"hooks[{name!r}]", "queryloop has no such moment, so it never fires"
            )
        out[name] = [_matcher(m) for m in matchers]
    return out


def _matcher(matcher: HookMatcher) -> LoopHookMatcher:
    timeout = matcher.timeout if matcher.timeout is not None else DEFAULT_HOOK_TIMEOUT
    hooks = [CallableHook(_callable(fn), timeout) for fn in matcher.hooks]
    return LoopHookMatcher(matcher.matcher or "", hooks)


def _callable(fn: HookCallback) -> Callable[[dict[str, Any]], Any]:
    async def run(payload: dict[str, Any]) -> Any:
        context: HookContext = {"signal": None}
        tool_use_id = payload.get("tool_use_id")
        output = await fn(payload, tool_use_id if isinstance(tool_use_id, str) else None, context)
        return wire_output(output)

    run.__qualname__ = getattr(fn, "__qualname__", repr(fn))  # how hook warnings name it
    return run


def wire_output(output: object) -> Any:
    """A callback's return value as Claude Code's hook output (None: no opinion; a value
    that is not a dict goes through, for the hook runner to report). An `async_` output
    means "do not wait": the callback already returned, so it says nothing."""
    if not isinstance(output, Mapping):
        return output
    if output.get("async_") is True or output.get("async") is True:
        return None
    return {_KEYWORDS.get(key, key): value for key, value in output.items()}


class PermissionBridge:
    """`can_use_tool(tool_name, input, ToolPermissionContext)` as queryloop's callback.

    A deny with `interrupt=True` also stops the running turn: `on_interrupt` is given by
    the conversation once its Agent exists (a callable breaks the cycle: the Agent is
    built with this bridge)."""

    def __init__(self, fn: CanUseTool) -> None:
        self.fn = fn
        self.on_interrupt: Callable[[], None] | None = None

    async def __call__(
        self, tool_name: str, input: Mapping[str, Any], request: PermissionRequest
    ) -> PermissionResult:
        suggestion = _suggestion(request)
        context = ToolPermissionContext(
            suggestions=[suggestion] if suggestion is not None else [],
            tool_use_id=request.tool_use_id,
            agent_id=request.agent_id,
            decision_reason=request.reason,
        )
        answer = await self.fn(tool_name, dict(input), context)
        if isinstance(answer, PermissionResultAllow):
            remember = _remembers(answer.updated_permissions, suggestion)
            return PermissionAllow(updated_input=answer.updated_input, remember=remember)
        if isinstance(answer, PermissionResultDeny):
            if answer.interrupt and self.on_interrupt is not None:
                self.on_interrupt()
            return PermissionDeny(answer.message)
        raise TypeError(
            f"can_use_tool returned {type(answer).__name__}; return PermissionResultAllow or "
            "PermissionResultDeny"
        )


def _suggestion(request: PermissionRequest) -> PermissionUpdate | None:
    """The rule that would approve calls like this one, for this session."""
    rule = request.suggested_rule
    if not rule:
        return None
    name, _, rest = rule.partition("(")
    content = rest[:-1] if rest.endswith(")") else None
    return PermissionUpdate(
        type="addRules",
        rules=[PermissionRuleValue(name, content or None)],
        behavior="allow",
        destination="session",
    )


def _remembers(
    updates: Sequence[PermissionUpdate] | None, offered: PermissionUpdate | None
) -> bool:
    """True when the callback applies the suggested rule; any other update is refused by
    name (queryloop cannot write settings files or switch modes from a callback)."""
    if not updates:
        return False
    for update in updates:
        if offered is None or update != offered:
            raise UnsupportedOptionError(
                "can_use_tool(...).updated_permissions",
                f"{update.to_dict()} is not the suggested session rule; queryloop applies "
                "only the update it offered in ToolPermissionContext.suggestions",
            )
    return True
