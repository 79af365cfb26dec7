"""queryloop.hooks: hook configuration and the hook runner (command, http and prompt
handlers, and Python callables), to Claude Code's hooks reference.

See docs/hooks.md for the events, when each fires, the JSON each hook reads and what its
output may say.
"""

from __future__ import annotations

from .config import (
    DEFAULT_HOOK_TIMEOUT,
    CallableHook,
    CommandHook,
    HookCallable,
    HookCondition,
    HookMatcher,
    HooksConfig,
    HttpHook,
    PromptHook,
)
from .events import NOT_FIRED, HookEvent
from .parsing import HookProblem, parse_hooks
from .prompt import PromptModel
from .runner import HookRunner
from .types import (
    HookOutcome,
    HookStatus,
    HookWarning,
    LoopHooks,
    PermissionRequestOutcome,
    StopHook,
    StopHookInput,
    StopHookResult,
    ToolCallRecord,
)

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "NOT_FIRED",
    "CallableHook",
    "CommandHook",
    "HookCallable",
    "HookCondition",
    "HookEvent",
    "HookMatcher",
    "HookOutcome",
    "HookProblem",
    "HookRunner",
    "HookStatus",
    "HookWarning",
    "HooksConfig",
    "HttpHook",
    "LoopHooks",
    "PermissionRequestOutcome",
    "PromptHook",
    "PromptModel",
    "StopHook",
    "StopHookInput",
    "StopHookResult",
    "ToolCallRecord",
    "parse_hooks",
]
