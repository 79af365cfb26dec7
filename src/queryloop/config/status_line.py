"""The `statusLine` setting: a command whose first line of output is the REPL's status line.

Claude Code's: `{"statusLine": {"type": "command", "command": "~/.claude/statusline.sh",
"padding": 0}}`; the command "receives JSON session data on stdin and displays whatever your
script prints" (code.claude.com/docs/en/statusline). It is a command, so an untrusted
project's value is ignored like its hooks. The CLI runs it (`cli.status_line`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class StatusLineSetting:
    """The command to run and the padding Claude Code accepts (kept, not drawn)."""

    command: str
    padding: int = 0


def parse_status_line(key: str, raw: object) -> StatusLineSetting:
    """`{"type": "command", "command": "...", "padding": N}`; anything else is an error."""
    if not isinstance(raw, Mapping):
        raise ValueError(f'\'{key}\' must be an object: {{"type": "command", "command": ...}}')
    if raw.get("type", "command") != "command":
        raise ValueError(f"'{key}.type' must be \"command\" (the only kind there is)")
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError(f"'{key}.command' must be a non-empty string")
    padding = raw.get("padding", 0)
    if not isinstance(padding, int) or isinstance(padding, bool) or padding < 0:
        raise ValueError(f"'{key}.padding' must be a whole number of columns")
    return StatusLineSetting(command, padding)


def describe_status_line(value: StatusLineSetting) -> str:
    """How an ignored value is listed (`queryloop trust --show`)."""
    return value.command
