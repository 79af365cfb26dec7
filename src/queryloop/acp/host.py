"""What `queryloop acp` is given by the command that starts it.

The CLI builds its Agents with `cli.agent_factory.make_agent` and answers "always" with
`cli.always`; `acp` sits below `cli` in the layers, so the CLI hands those functions over as
values (the REPL's slash commands get their `CommandHost` the same way) and both front ends
build the same Agent from the same options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..agent import Agent
    from ..permissions import PermissionRequest


@dataclass(frozen=True)
class AgentSpec:
    """What an editor asked of one session's Agent, over the command line's options."""

    cwd: Path
    """The session's working folder (the client's `cwd`)."""
    model: str | None = None
    """A model chosen in the editor (`session/set_config_option`); None: the options'."""
    resume: str | None = None
    """A stored session's id to continue (`session/load`, `session/resume`)."""
    mcp_servers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """The client's MCP servers, in `.mcp.json` shape; they join the project's own."""


class AgentMaker(Protocol):
    """Builds the Agent for a spec; `extra` are Agent keywords (callbacks)."""

    def __call__(self, spec: AgentSpec, /, **extra: Any) -> Agent: ...


@dataclass(frozen=True)
class AcpHost:
    """The CLI's parts the ACP server uses."""

    make_agent: AgentMaker
    cwd: Path
    """The folder `queryloop acp` was started in (`session/list` without a cwd)."""
    always_rule: Callable[[PermissionRequest], str | None]
    """The allow rule "Always Allow" adds for a call, or None when none can be offered."""
    save_rule: Callable[[Path, str], Path]
    """Writes an allow rule to the project's local settings (the REPL's `[a]lways`)."""
