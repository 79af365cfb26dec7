"""What a subagent inherits from the thread that starts it: `SubagentHost`.

The session's runtime puts one host in `ToolContext.subagents`; the Agent tool reads
it, and each subagent gets a derived host (one level deeper, its own tools) in its own
context, so nesting is bounded by `max_depth`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..context.request import ToolSchemaCache
from ..providers.base import ModelProvider
from ..session.stores import TranscriptRef
from ..telemetry import Telemetry
from ..tools.base import PermissionChecker, Tool
from .definitions import AgentCatalog, LoadedAgents
from .thread import OutputLimits, ThreadOptions

if TYPE_CHECKING:
    from ..hooks import HookRunner
    from ..tasks import TaskManager

AGENT_TOOL_NAME = "Agent"
"""Claude Code's name for the Agent tool (its older name `Task` stays an alias)."""
DEFAULT_MAX_DEPTH = 2
"""Main thread = depth 0; its subagents (depth 1) may start subagents (depth 2), which may not."""


@dataclass(frozen=True)
class SubagentHost:
    """The parent side of a subagent: model access, agent types, tools, rules, hooks, session."""

    provider: ModelProvider
    catalog: AgentCatalog
    main: ThreadOptions
    """The main thread's options: the model subagents inherit (`model`), the memory they
    follow (`user_context`), the schemas they reuse (`schemas`), the output limits and the
    thinking config they get too."""
    tools: tuple[Tool, ...]
    """The starting thread's tools: a subagent's tools are a subset of these."""
    permission: PermissionChecker | None = None
    hooks: HookRunner | None = None
    dynamic_suffix: str = ""
    """The environment part of the system prompt (cwd, platform, git)."""
    session_id: str = ""
    sidechains: TranscriptRef | None = None
    """The session's transcript: each subagent's is its subkey `subagents/agent-<id>`
    (`agents.sidechain`); None: not persisted."""
    tasks: TaskManager | None = None
    depth: int = 0
    max_depth: int = DEFAULT_MAX_DEPTH
    agent_id: str | None = None
    """The agent id of the thread this host belongs to (None: the main thread)."""
    deferred_names: frozenset[str] = frozenset()
    """Tools the parent loads through ToolSearch: a subagent defers the same ones."""
    telemetry: Telemetry = field(default_factory=Telemetry)
    """The session's traces: each subagent gets its own thread's spans from it."""

    @property
    def model(self) -> str:
        """The session's model (`inherit`): the main thread's."""
        return self.main.model

    @property
    def user_context(self) -> Mapping[str, str]:
        """Memory files and the like (QUERYLOOP.md, AGENTS.md): subagents follow them too."""
        return self.main.user_context

    @property
    def schemas(self) -> ToolSchemaCache:
        """The session's serialized tool schemas: subagents reuse the same bytes instead of
        rendering every schema again (that took ~0.1 s per subagent)."""
        return self.main.schemas

    @property
    def limits(self) -> OutputLimits:
        """The main thread's output limits: subagents get the same."""
        return self.main.limits

    @property
    def thinking(self) -> Mapping[str, Any] | None:
        """The main thread's thinking config: subagents think alike."""
        return self.main.thinking

    @property
    def agents(self) -> LoadedAgents:
        """The agent types as last read."""
        return self.catalog.current

    @property
    def can_nest(self) -> bool:
        """Whether a subagent started from here may itself start subagents."""
        return self.depth + 1 < self.max_depth

    def child(self, *, agent_id: str, tools: Sequence[Tool], permission: Any) -> SubagentHost:
        """The host a subagent's own Agent calls see: one level deeper, its tools and rules."""
        return replace(
            self, tools=tuple(tools), permission=permission, depth=self.depth + 1, agent_id=agent_id
        )
