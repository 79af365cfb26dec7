"""When to put tools behind ToolSearch: only when their definitions are large.

Deferring tools (`queryloop.tools.deferred`) keeps big tool sets out of every request, but
it costs a model request of its own: before the first real step the model must call ToolSearch
to load what it needs, and again after each compaction. For a handful of small MCP tools that
costs far more than sending their definitions. So, like Claude Code's `ENABLE_TOOL_SEARCH=auto`
(https://code.claude.com/docs/en/agent-sdk/tool-search), the default checks the combined size
of the deferrable definitions against the model's context window and defers only above 10%.

Values (settings `"toolSearch"`, `Agent(tool_search=...)`):

- `"auto"` (default): defer when the definitions exceed 10% of the context window;
- `"auto:N"`: the same with N percent;
- an int (or a digit string): defer when the definitions exceed that many tokens;
- `"always"` (or `"true"`): always defer (the behaviour before this existed);
- `"never"` (or `"false"`): never defer; every tool goes in `tools`.

The decision is made once, when a session assembles its tools, so its tools array never
flips between the two shapes mid-session.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from ..errors import ConfigError
from ..tools.base import Tool

DEFAULT_PERCENT = 10.0
"""Claude Code's auto threshold: definitions above 10% of the context window are deferred."""
CHARS_PER_TOKEN = 4
"""The size estimate (the same ceil(chars / 4) the compaction budget uses)."""

ToolSearchValue = str | int | None
"""What settings and options accept (see the module docstring)."""


class ToolSearchMode(Enum):
    """Whether deferrable tools go behind ToolSearch."""

    AUTO = "auto"
    ALWAYS = "always"
    NEVER = "never"


@dataclass(frozen=True, slots=True)
class ToolSearchPolicy:
    """A parsed tool-search setting: a mode and, for AUTO, its threshold."""

    mode: ToolSearchMode = ToolSearchMode.AUTO
    percent: float = DEFAULT_PERCENT
    threshold_tokens: int | None = None
    """An absolute threshold (tokens); overrides `percent` when set."""

    def threshold(self, context_window: int) -> int:
        """The token size above which tools are deferred."""
        if self.threshold_tokens is not None:
            return self.threshold_tokens
        return int(context_window * self.percent / 100.0)

    def should_defer(self, tools: Sequence[Tool], context_window: int) -> bool:
        """Whether `tools` (the deferrable ones) go behind ToolSearch."""
        if not tools or self.mode is ToolSearchMode.NEVER:
            return False
        if self.mode is ToolSearchMode.ALWAYS:
            return True
        return definition_tokens(tools) > self.threshold(context_window)


def parse_tool_search(value: ToolSearchValue) -> ToolSearchPolicy:
    """The policy for a setting value; `ConfigError` naming the accepted values otherwise."""
    if value is None:
        return ToolSearchPolicy()
    if isinstance(value, bool):
        return ToolSearchPolicy(ToolSearchMode.ALWAYS if value else ToolSearchMode.NEVER)
    if isinstance(value, int):
        return _tokens(value, value)
    text = value.strip().lower()
    if text in ("auto", ""):
        return ToolSearchPolicy()
    if text in ("always", "true", "on"):
        return ToolSearchPolicy(ToolSearchMode.ALWAYS)
    if text in ("never", "false", "off"):
        return ToolSearchPolicy(ToolSearchMode.NEVER)
    if text.isdigit():
        return _tokens(int(text), value)
    if text.startswith("auto:"):
        try:
            percent = float(text[len("auto:") :])
        except ValueError:
            percent = -1.0
        if 0 <= percent <= 100:
            return ToolSearchPolicy(percent=percent)
    raise ConfigError(
        f"tool search setting {value!r} is not one of: 'auto', 'auto:N' (percent of the "
        "context window), a token count, 'always', 'never'"
    )


def _tokens(tokens: int, raw: object) -> ToolSearchPolicy:
    if tokens < 0:
        raise ConfigError(f"tool search threshold {raw!r} must be a token count >= 0")
    return ToolSearchPolicy(threshold_tokens=tokens)


def definition_tokens(tools: Sequence[Tool]) -> int:
    """Estimated tokens of the tools' definitions as the API receives them."""
    chars = sum(
        len(json.dumps(_definition(tool), ensure_ascii=False, separators=(",", ":")))
        for tool in tools
    )
    return math.ceil(chars / CHARS_PER_TOKEN)


def _definition(tool: Tool) -> dict[str, object]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema()}


def plan_deferral(
    tools: Sequence[Tool],
    *,
    context_window: int,
    policy: ToolSearchPolicy,
    deferrable: Callable[[Tool], bool],
) -> tuple[list[Tool], list[Tool]]:
    """(eager, deferred): the deferrable tools are deferred only if `policy` says so."""
    candidates = [t for t in tools if deferrable(t)]
    if not policy.should_defer(candidates, context_window):
        return list(tools), []
    return [t for t in tools if not deferrable(t)], candidates
