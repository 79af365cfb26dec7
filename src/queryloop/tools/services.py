"""The session services a tool call can reach, as typed fields of `ToolContext`.

Packages above `tools` make these services (the permission checker the hidden-path predicate,
`queryloop.agents` the subagent host, the session the task manager); a tool reads them from
its context. The types are declared here, at or below `tools`, so `tools` imports nothing of
the packages that provide them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..providers.base import ModelProvider
    from .base import PermissionChecker, Tool, ToolHooks


@runtime_checkable
class HiddenPaths(Protocol):
    """What `Read` deny rules protect, as Grep, Glob and LS skip it: `Grep(".")` never prints
    the lines of a `Read(./.env)`-denied file, and Glob and LS do not list it. The session
    builds one (`permissions.ReadDenials`); the tools ask it through `ToolContext.hidden()`."""

    def hides(self, cwd: Path) -> Callable[[Path], bool] | None:
        """True for each path hidden from a tool working in `cwd`; None when no rule hides
        anything (a search may then use ripgrep, which cannot ask per file)."""
        ...


@runtime_checkable
class SubagentService(Protocol):
    """The thread's subagent host, as the tool context carries it.

    `queryloop.agents.SubagentHost` is the implementation; the Agent tool (which lives in
    `queryloop.agents`) narrows to it. Declared here so a context can hold it without
    `tools` importing `agents`.
    """

    @property
    def depth(self) -> int:
        """0 on the main thread, 1 in its subagents, and so on."""
        ...

    @property
    def agent_id(self) -> str | None:
        """The agent id of the thread the host belongs to (None: the main thread)."""
        ...

    @property
    def tools(self) -> Sequence[Tool]:
        """The thread's tools (a skill's `!` commands run with its Bash tool)."""
        ...

    @property
    def permission(self) -> PermissionChecker | None:
        """The thread's permission checker."""
        ...

    @property
    def hooks(self) -> ToolHooks | None:
        """The hooks the thread's tool calls run with."""
        ...


@dataclass(frozen=True, slots=True)
class Grant:
    """The `allowed-tools` of one invoked skill: allow rules while the prompt runs."""

    skill: str
    rules: tuple[Any, ...]
    """`permissions.rules.PermissionRule`s (typed loosely: `tools` sits below `permissions`)."""


class SkillGrants:
    """The tools the skills invoked during the current prompt let the model use without
    asking (their `allowed-tools`), for the permission checker's allow step.

    Owner: the session (one object, shared by the main thread's and its subagents' tool
    contexts). The Skill tool and a typed `/name` add grants; the Agent clears them when the
    prompt's run ends, so "while the skill runs" is the rest of the prompt that invoked it
    (Claude Code: the grant "clears when you send your next message"). A grant is an allow
    rule and nothing more: deny and ask rules, plan mode and protected paths come first."""

    def __init__(self) -> None:
        self._grants: list[Grant] = []

    def grant(self, skill: str, rules: Sequence[Any]) -> None:
        """Add a skill's rules (nothing when it has none)."""
        if rules:
            self._grants.append(Grant(skill, tuple(rules)))

    def clear(self) -> None:
        """The prompt ended: every grant ends with it."""
        self._grants.clear()

    @property
    def active(self) -> tuple[Grant, ...]:
        """The grants in force, oldest first."""
        return tuple(self._grants)


@dataclass(frozen=True, slots=True)
class FileTextSnapshot:
    """A file's text at one version (mtime in ns, size in bytes): what the agent last saw of
    it, so a change on disk is announced as a diff (`queryloop.context.providers.files`)."""

    mtime_ns: int
    size: int
    text: str


@dataclass(frozen=True, slots=True)
class SideModel:
    """A model a tool asks on the side: the session's provider, metered as a side request
    under the tool's purpose (its cost counts, not as a turn), and the model's name."""

    provider: ModelProvider
    model: str


@dataclass(frozen=True, slots=True)
class WebModels:
    """Whom the web tools ask (built once per session by the agent layer).

    `search`: the session's model with the API's server-side web search (WebSearch); None
    where the provider has no such tool (an OpenAI-compatible server), and WebSearch is not
    offered. `fetch`: the small fast model that answers a WebFetch call's prompt over the
    page; None: the page itself is the result."""

    search: SideModel | None = None
    fetch: SideModel | None = None
