"""queryloop.hooks: hook configuration, the hook runner (shell commands and Python callables).

See docs/settings.md for the events, the JSON each hook reads and what its output may say.
"""

from __future__ import annotations

from .config import (
    DEFAULT_HOOK_TIMEOUT,
    CallableHook,
    CommandHook,
    HookCallable,
    HookEvent,
    HookMatcher,
    HooksConfig,
    parse_hooks,
)
from .runner import HookRunner
from .types import HookOutcome, HookWarning, StopHook, StopHookInput, StopHookResult

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "CallableHook",
    "CommandHook",
    "HookCallable",
    "HookEvent",
    "HookMatcher",
    "HookOutcome",
    "HookRunner",
    "HookWarning",
    "HooksConfig",
    "StopHook",
    "StopHookInput",
    "StopHookResult",
    "parse_hooks",
]
