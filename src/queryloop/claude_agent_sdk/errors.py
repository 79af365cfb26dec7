"""The Claude Agent SDK's exception classes, on queryloop.

    ClaudeSDKError (a QueryloopError)
    ├── CLIConnectionError          a client method was called before connect()
    │   └── CLINotFoundError        (kept for `except` clauses; queryloop runs no CLI)
    ├── ProcessError                the run failed (an exception of the loop underneath)
    │   └── ResultError             query() ended on an error result (after yielding it)
    ├── CLIJSONDecodeError          (kept for `except` clauses; nothing is decoded here)
    ├── MessageParseError           a prompt message dict has a shape this SDK cannot read
    └── UnsupportedOptionError      an option or value queryloop cannot honour (also a
                                    ValueError): named, never silently ignored

The names, bases and attributes are the SDK's, so `except ProcessError as e: e.exit_code`
and `except ResultError as e: e.subtype` keep working when only the import changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import QueryloopError


class ClaudeSDKError(QueryloopError):
    """Base class of every error this package raises."""


class CLIConnectionError(ClaudeSDKError):
    """A `ClaudeSDKClient` method needs `connect()` (or `async with`) first."""


class CLINotFoundError(CLIConnectionError):
    """Never raised by queryloop (there is no CLI to find); kept so `except` clauses that
    name it still import."""

    def __init__(self, message: str = "Claude Code not found", cli_path: str | None = None):
        super().__init__(f"{message}: {cli_path}" if cli_path else message)


class ProcessError(ClaudeSDKError):
    """The run failed. `exit_code` is 1 (the CLI's code for a failed run), `stderr` the
    error's text."""

    def __init__(self, message: str, exit_code: int | None = None, stderr: str | None = None):
        self.exit_code = exit_code
        self.stderr = stderr
        if exit_code is not None:
            message = f"{message} (exit code: {exit_code})"
        if stderr:
            message = f"{message}\nError output: {stderr}"
        super().__init__(message)


class ResultError(ProcessError):
    """`query()` ended on a result with `is_error` true; the `ResultMessage` was yielded
    first. Its fields are here too, so a caller branches on them, not on the text."""

    def __init__(
        self, message: str, data: Mapping[str, Any] | None = None, exit_code: int | None = 1
    ):
        self.data: dict[str, Any] = dict(data or {})
        self.subtype: str | None = _str(self.data.get("subtype"))
        self.result: str | None = _str(self.data.get("result"))
        self.terminal_reason: str | None = _str(self.data.get("terminal_reason"))
        self.session_id: str | None = _str(self.data.get("session_id"))
        status = self.data.get("api_error_status")
        self.api_error_status: int | None = status if isinstance(status, int) else None
        errors = self.data.get("errors")
        self.errors: list[str] = [e for e in errors or [] if isinstance(e, str) and e.strip()]
        super().__init__(message, exit_code=exit_code)


class CLIJSONDecodeError(ClaudeSDKError):
    """Never raised by queryloop (no CLI output is decoded); kept for `except` clauses."""

    def __init__(self, line: str, original_error: Exception):
        self.line = line
        self.original_error = original_error
        super().__init__(f"Failed to decode JSON: {line[:100]}...")


class MessageParseError(ClaudeSDKError):
    """A message dict given as a prompt could not be read."""

    def __init__(self, message: str, data: Mapping[str, Any] | None = None):
        self.data = dict(data) if data is not None else None
        super().__init__(message)


class UnsupportedOptionError(ClaudeSDKError, ValueError):
    """An option (or a value of one) that queryloop cannot honour. `option` names it; the
    message says why and what to do instead. Raised when the options are used (`query()`,
    `connect()`), before any model request."""

    def __init__(self, option: str, why: str) -> None:
        self.option = option
        super().__init__(f"ClaudeAgentOptions.{option} is not supported by queryloop: {why}")


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None
