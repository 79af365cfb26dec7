"""queryloop: a Python agent runtime and terminal coding agent."""

__version__ = "0.1.0"
