"""queryloop: a Python agent runtime and terminal coding agent.

    from queryloop import Agent, tool

The heavy parts (providers, MCP) load when an Agent starts, not at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentOptions",
    "PermissionDenial",
    "RunResult",
    "__version__",
    "query",
    "tool",
]

if TYPE_CHECKING:
    from .agent import Agent, AgentOptions, PermissionDenial, RunResult
    from .loop import query
    from .tools import tool


def __getattr__(name: str) -> Any:
    # Lazy so that `import queryloop` (and `queryloop --help`) stay fast.
    if name in ("Agent", "AgentOptions", "PermissionDenial", "RunResult"):
        from . import agent

        return getattr(agent, name)
    if name == "query":
        from .loop import query

        return query
    if name == "tool":
        from .tools import tool

        return tool
    raise AttributeError(f"module 'queryloop' has no attribute {name!r}")
