"""The SDK front: `Agent` assembles a session and drives the query loop for each prompt."""

from ..loop.deferred import Decision, UnknownDeferralError
from ..messages.deferral import DeferralMismatchError, DeferredBy, PendingCall
from .core import Agent
from .options import (
    AgentKwargs,
    AgentOptions,
    CallbackOptions,
    ContextOptions,
    LimitOptions,
    ModelOptions,
    PermissionOptions,
    SessionOptions,
    SubagentOptions,
    ToolOptions,
    WorkspaceOptions,
)
from .result import PermissionDenial, RunResult

__all__ = [
    "Agent",
    "AgentKwargs",
    "AgentOptions",
    "CallbackOptions",
    "ContextOptions",
    "Decision",
    "DeferralMismatchError",
    "DeferredBy",
    "LimitOptions",
    "ModelOptions",
    "PendingCall",
    "PermissionDenial",
    "PermissionOptions",
    "RunResult",
    "SessionOptions",
    "SubagentOptions",
    "ToolOptions",
    "UnknownDeferralError",
    "WorkspaceOptions",
]
