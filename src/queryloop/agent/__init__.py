"""The SDK front: `Agent` assembles a session and drives the query loop for each prompt."""

from .core import Agent
from .options import AgentKwargs, AgentOptions
from .result import PermissionDenial, RunResult

__all__ = ["Agent", "AgentKwargs", "AgentOptions", "PermissionDenial", "RunResult"]
