"""The root of queryloop's exception tree.

QueryloopError
├── ConfigError                 you gave queryloop something it cannot use (settings, flags)
├── providers.ProviderError     the model API or the network failed (see providers.errors)
└── tools.ToolError             a tool failed; becomes an is_error tool_result, never a crash
"""

from __future__ import annotations


class QueryloopError(Exception):
    """Base class of every exception queryloop raises on purpose."""


class ConfigError(QueryloopError):
    """A settings file, flag or argument is invalid; the message names it and the fix."""
