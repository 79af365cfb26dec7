"""The SDK front: `Agent` assembles a session and drives the query loop for each prompt."""

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
    "LimitOptions",
    "ModelOptions",
    "PermissionDenial",
    "PermissionOptions",
    "RunResult",
    "SessionOptions",
    "SubagentOptions",
    "ToolOptions",
    "WorkspaceOptions",
]
