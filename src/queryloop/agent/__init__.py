"""The SDK front: `Agent` assembles a session and drives the query loop for each prompt."""

from .core import Agent
from .options import AgentOptions
from .result import RunResult

__all__ = ["Agent", "AgentOptions", "RunResult"]
