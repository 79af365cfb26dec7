"""What `Read` deny rules hide from the results of tools that walk folders (Grep, Glob, LS).

The permission checker puts a predicate into `ToolContext.extras[HIDDEN_PATHS]` before each
call; the file tools skip every path it hides, so `Grep(".")` never prints the lines of a
`Read(./.env)`-denied file, and Glob and LS do not list it. Standard library only: the file
tools import this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

HIDDEN_PATHS = "queryloop.permissions.hidden_paths"
"""The `ToolContext.extras` key of the predicate `(path) -> bool`."""


def hidden_filter(extras: Mapping[str, Any]) -> Callable[[Path], bool] | None:
    """The predicate the checker installed, or None when no Read deny rule exists."""
    found = extras.get(HIDDEN_PATHS)
    return found if callable(found) else None
