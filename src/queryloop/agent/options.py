"""The Agent's options, split from the Agent so setup can be tested on its own."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents.definitions import AgentDefinition
from ..agents.host import DEFAULT_MAX_DEPTH
from ..hooks.types import StopHook
from ..messages.types import Message
from ..providers.base import ModelProvider
from ..providers.retry import RetryPolicy
from ..tools.base import Tool

AskPermission = Callable[[str, Mapping[str, Any], str], Awaitable[bool | str]]
"""Asks a person: (tool name, input, reason) -> True (allow once), "always", or False."""


@dataclass(frozen=True)
class AgentOptions:
    """Every knob of an Agent. `None` means "use the default / the settings files"."""

    model: str | None = None
    provider: ModelProvider | None = None
    base_url: str | None = None
    """The API endpoint of the provider queryloop builds (default: the SDKs' env vars)."""
    retry: RetryPolicy | None = None
    """Retries of the provider queryloop builds (overloads beyond it switch to the fallback)."""
    tools: Sequence[Tool] | None = None
    extra_tools: Sequence[Tool] = ()
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    max_turns: int | None = None
    max_tokens: int | None = None
    fallback_model: str | None = None
    hooks: Mapping[str, Sequence[Any]] | None = None
    stop_hooks: Sequence[StopHook] = ()
    permission_mode: str | None = None
    allowed_tools: Sequence[str] = ()
    disallowed_tools: Sequence[str] = ()
    can_use_tool: Callable[..., Any] | None = None
    ask_permission: AskPermission | None = None
    interactive: bool = False
    """True when a person can answer permission prompts (the REPL)."""
    on_notice: Callable[[str], None] | None = None
    """Called with each notice for the user: ignored untrusted settings, broken settings
    files, MCP servers that failed, hook warnings. `Agent.notices` keeps them too."""
    cwd: Path = field(default_factory=Path.cwd)
    mcp_config: Path | None = None
    session_id: str | None = None
    persist: bool = True
    home: Path | None = None
    trust: bool | None = None
    thinking: Mapping[str, Any] | None = None
    token_budget: int | None = None
    autocompact_threshold: int | None = None
    """Tokens at which to compact; None = the model's default threshold."""
    context_collapse: bool = False
    """Collapse old rounds into one-line summaries (a read-time view) before a model-written
    autocompact summary is needed. Off by default: on the 80-turn benchmark a model-written
    summary cost 29% less and kept more of the task (docs/benchmarks.md)."""
    context_window: int | None = None
    """Override the model table's context window (e.g. a local model)."""
    tool_search: str | int | None = None
    """When MCP tools go behind ToolSearch: "auto" (default: above 10% of the context window),
    "auto:N" (N percent), a token threshold, "always" or "never" (docs/context.md). None = the
    settings' "toolSearch", else "auto"."""
    env: Mapping[str, str] = field(default_factory=dict)
    history: Sequence[Message] = ()
    """Messages to start the conversation from (a seeded or imported history)."""
    tool_use_summaries: bool = False
    """Write a one-line summary of each batch of tool calls with a small fast model, beside
    the next model call (`ToolUseSummaryMessage`s; their cost is counted). The REPL turns
    this on; off by default headless and in the SDK (docs/loop.md)."""
    summary_model: str | None = None
    """The model for tool-use summaries (default: Haiku on Anthropic; on an OpenAI-compatible
    server none, so no summaries, unless one is named here)."""
    agents: Sequence[AgentDefinition] = ()
    """Subagent types besides the built-in general-purpose one and the agent files
    (`.queryloop/agents/*.md`, `$QUERYLOOP_HOME/agents/*.md`); these win by name."""
    max_subagent_depth: int = DEFAULT_MAX_DEPTH
    """How deep subagents may nest (1: subagents cannot start subagents)."""
