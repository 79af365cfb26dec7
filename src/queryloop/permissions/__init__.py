"""queryloop.permissions: modes, allow/ask/deny rules and the permission checker.

See docs/settings.md for the rule syntax and the order in which a call is decided.
"""

from __future__ import annotations

from .checker import (
    AskHandler,
    CanUseTool,
    PermissionAllow,
    PermissionChecker,
    PermissionContext,
    PermissionDefer,
    PermissionDeny,
    PermissionRequest,
    PermissionResult,
)
from .hidden import ReadDenials
from .modes import EDIT_TOOLS, READ_TOOLS, PermissionMode, parse_mode
from .rules import MatchContext, PermissionRule, RuleSet

__all__ = [
    "EDIT_TOOLS",
    "READ_TOOLS",
    "AskHandler",
    "CanUseTool",
    "MatchContext",
    "PermissionAllow",
    "PermissionChecker",
    "PermissionContext",
    "PermissionDefer",
    "PermissionDeny",
    "PermissionMode",
    "PermissionRequest",
    "PermissionResult",
    "PermissionRule",
    "ReadDenials",
    "RuleSet",
    "parse_mode",
]
