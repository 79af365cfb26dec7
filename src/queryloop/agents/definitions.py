"""Agent definitions: Claude Code's agent file format, where they are found, and the built-in.

An agent file is Markdown with YAML front matter; the body is the subagent's system prompt::

    ---
    name: code-reviewer
    description: Reviews a diff for bugs. Use after a change is made.
    tools: Read, Grep, Glob          # or a YAML list; omitted = every tool of the parent
    disallowedTools: Bash            # removed from the inherited or listed tools
    model: haiku                     # sonnet | opus | haiku | inherit | a full model id
    permissionMode: plan             # default | acceptEdits | plan | bypassPermissions
    maxTurns: 10
    background: false                # true: always run in the background
    ---
    You are a careful reviewer. ...

Files are read from `$QUERYLOOP_HOME/agents/` and `~/.claude/agents/` (user) and
`.queryloop/agents/` and `.claude/agents/` (project: in every folder from the repository root
down to the working folder, only in a trusted folder, like the project's other settings), in
subfolders too, a file's name coming from its `name` field, never its folder (Claude Code's
rule): `config.discovery` finds them, this module reads and parses them. A Markdown file
without front matter is documentation kept beside the agents (a README), not an agent, as in
Claude Code. Later sources win by name: built-in < user < project < agents passed in Python
(`Agent(..., agents=[...])`).

The front matter is read as Claude Code reads it (`config.front_matter`: a `key: value` line
YAML refuses, such as a description with an unquoted `: ` in it, is read as that text).
Claude Code's documented fields that change nothing of what the agent may do (`color`,
`effort`, `omitClaudeMd`, `experimental`) are accepted quietly; those queryloop does not
apply yet (skills, mcpServers, hooks, memory, isolation, initialPrompt) and fields Claude Code
does not know either are kept in `extra` and named once in a notice.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..config.discovery import FileScope, FoundFile, SettingSources, agent_files
from ..config.front_matter import FrontMatterError, split_front_matter
from ..errors import ConfigError

GENERAL_PURPOSE = "general-purpose"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")
_TOOL_SPEC = re.compile(r"^([A-Za-z0-9_-]+)(?:\(.*\))?$")
USED_FIELDS = frozenset(
    {"name", "description", "tools", "disallowedTools", "model", "permissionMode", "maxTurns"}
    | {"background"}
)
QUIET_FIELDS = frozenset({"color", "effort", "omitClaudeMd", "experimental"})
"""Claude Code's fields that change nothing of what the agent may do: accepted, no notice."""
UNUSED_FIELDS = frozenset({"skills", "mcpServers", "hooks", "memory", "isolation", "initialPrompt"})
"""Claude Code's fields queryloop does not apply yet (code.claude.com/docs/en/sub-agents,
"Frontmatter reference"): kept in `extra` and named in a notice."""
MODES = ("default", "acceptEdits", "plan", "bypassPermissions")


class AgentSource(StrEnum):
    """Where a definition came from (later sources override earlier ones by name)."""

    BUILT_IN = "built-in"
    USER = "user"
    PROJECT = "project"
    PLUGIN = "plugin"
    SDK = "sdk"


@dataclass(frozen=True)
class AgentDefinition:
    """One subagent type. `tools` None means every tool of the parent."""

    name: str
    description: str
    prompt: str = ""
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    model: str | None = None
    """None or "inherit": the parent's model; an alias (haiku, sonnet, opus) or a model id."""
    permission_mode: str | None = None
    """Asked-for mode; a subagent never gets more permission than its parent (the stricter
    of the two applies)."""
    max_turns: int | None = None
    background: bool = False
    source: AgentSource = AgentSource.SDK
    path: Path | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ConfigError(
                f"agent name {self.name!r} is not valid: use letters, digits, '-', '_', '.'"
            )
        if not self.description.strip():
            raise ConfigError(f"agent {self.name!r} needs a description (when to use it)")
        if self.permission_mode is not None and self.permission_mode not in MODES:
            raise ConfigError(
                f"agent {self.name!r}: permissionMode {self.permission_mode!r} is not supported; "
                f"use one of {', '.join(MODES)}"
            )
        if self.max_turns is not None and self.max_turns < 1:
            raise ConfigError(f"agent {self.name!r}: maxTurns must be at least 1")

    def allows_tool(self, name: str, aliases: Iterable[str] = ()) -> bool:
        """Whether a tool (by name or one of its aliases) is in this agent's tool set."""
        names = {name, *aliases}
        if names & set(self.disallowed_tools):
            return False
        return self.tools is None or "*" in self.tools or bool(names & set(self.tools))


GENERAL_PURPOSE_AGENT = AgentDefinition(
    name=GENERAL_PURPOSE,
    description=(
        "General-purpose agent for researching complex questions, searching for code, and "
        "executing multi-step tasks. When you are searching for a keyword or file and are not "
        "confident that you will find the right match in the first few tries, use this agent "
        "to perform the search for you."
    ),
    prompt=(
        "You are an agent working for a coding assistant. Given the user's task, use the tools "
        "available to complete it fully, without gold-plating and without leaving it half "
        "done. Search broadly when you do not know where something lives; read files before "
        "you change them; prefer editing existing files to creating new ones.\n\n"
        "When you are done, reply with a concise report of what you found or did: the "
        "caller sees only your final message, not your tool calls, so include the file paths "
        "and facts it needs."
    ),
    source=AgentSource.BUILT_IN,
)


def parse_agent_text(
    text: str, *, source: AgentSource, path: Path | None = None
) -> AgentDefinition:
    """An `AgentDefinition` from an agent file's text; raises ConfigError saying what is wrong."""
    if not has_front_matter(text):
        raise ConfigError("no YAML front matter (the file must start with a line '---')")
    try:
        data, body = split_front_matter(text)
    except FrontMatterError as exc:
        raise ConfigError(f"line {exc.line}: {exc}") from None
    name = data.get("name") or (path.stem if path is not None else "")
    return AgentDefinition(
        name=str(name),
        description=str(data.get("description") or ""),
        prompt=body.strip(),
        tools=_tool_list(data.get("tools"), "tools"),
        disallowed_tools=_tool_list(data.get("disallowedTools"), "disallowedTools") or (),
        model=_optional_str(data.get("model")),
        permission_mode=_optional_str(data.get("permissionMode")),
        max_turns=_optional_int(data.get("maxTurns")),
        background=bool(data.get("background", False)),
        source=source,
        path=path,
        extra={k: v for k, v in data.items() if k not in USED_FIELDS | QUIET_FIELDS},
    )


def has_front_matter(text: str) -> bool:
    """Whether the text starts with a front matter line (`---`); without one, Claude Code
    takes a Markdown file in an agents folder for documentation, not an agent."""
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    return first.rstrip() == "---"


def _tool_list(value: Any, field_name: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    items: list[Any] = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        raise ConfigError(f"{field_name} must be a comma-separated string or a list")
    names: list[str] = []
    for item in items:
        spec = str(item).strip()
        if not spec:
            continue
        found = _TOOL_SPEC.match(spec)
        # `Agent(worker, reviewer)` narrows which agents it may spawn; the tool itself counts.
        names.append(found.group(1) if found else spec)
    return tuple(names)


def _optional_str(value: Any) -> str | None:
    return None if value is None or str(value).strip() == "" else str(value).strip()


def _optional_int(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ConfigError(f"maxTurns must be a whole number, got {value!r}")
    try:
        return int(value)
    except ValueError as exc:
        raise ConfigError(f"maxTurns must be a whole number, got {value!r}") from exc


@dataclass(frozen=True)
class LoadedAgents:
    """The effective agent types and what the user should be told about the files."""

    definitions: tuple[AgentDefinition, ...]
    notices: tuple[str, ...] = ()

    def get(self, name: str) -> AgentDefinition | None:
        """The definition called `name` (exact), or None."""
        return next((d for d in self.definitions if d.name == name), None)

    @property
    def listing(self) -> dict[str, str]:
        """Agent type -> description, for the agent-listing delta attachment."""
        return {d.name: " ".join(d.description.split()) for d in self.definitions}


_SOURCES = {
    FileScope.USER: AgentSource.USER,
    FileScope.PROJECT: AgentSource.PROJECT,
    FileScope.PLUGIN: AgentSource.PLUGIN,
}


def read_agent_file(found: FoundFile) -> tuple[AgentDefinition | None, list[str]]:
    """One agent file; a broken file is None and a notice, unused fields a notice."""
    path = found.path
    try:
        text = path.read_text(encoding="utf-8")
        if not has_front_matter(text):
            return None, []  # a README beside the agents
        definition = parse_agent_text(text, source=_SOURCES[found.scope], path=path)
    except (ConfigError, OSError, UnicodeDecodeError) as exc:
        return None, [f"agent file {path} skipped: {exc}"]
    return definition, _field_notices(path, definition.extra)


def _field_notices(path: Path, extra: Mapping[str, Any]) -> list[str]:
    unused = sorted(k for k in extra if k in UNUSED_FIELDS)
    unknown = sorted(k for k in extra if k not in UNUSED_FIELDS)
    said = []
    if unused:
        said.append(f"Claude Code's {', '.join(unused)} not applied by queryloop yet")
    if unknown:
        said.append(f"unknown field(s) {', '.join(unknown)} ignored (Claude Code ignores them too)")
    return [f"agent file {path}: " + "; ".join(said)] if said else []


def load_agents(
    cwd: Path,
    *,
    user_home: Path,
    trusted: bool,
    extra: Sequence[AgentDefinition] = (),
    include_builtin: bool = True,
    sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
    claude_dir: Path | None = None,
) -> LoadedAgents:
    """Built-in, user, project (when `trusted`) and `extra` definitions, later ones winning;
    agent files only of the scopes `sources` reads (`claude_dir`: Claude Code's user folder,
    default `~/.claude`)."""
    by_name: dict[str, AgentDefinition] = {}
    if include_builtin:
        by_name[GENERAL_PURPOSE] = GENERAL_PURPOSE_AGENT
    found = agent_files(cwd, user_home=user_home, trusted=trusted, claude_dir=claude_dir)
    read: list[AgentDefinition] = []
    notices: list[str] = []
    for file in sources.keep(found.files):
        definition, problems = read_agent_file(file)
        notices.extend(problems)
        if definition is not None:
            read.append(definition)
    if sources.project:  # the notices are about the project's files
        notices.extend(found.notices)
    for definition in [*read, *extra]:
        by_name[definition.name] = definition
    return LoadedAgents(tuple(by_name.values()), tuple(notices))


@dataclass(frozen=True)
class ToolNames:
    """The tools a session offers, to check the names agent definitions list against: a
    name no tool has is named in a notice (the agent gets the tools it names that exist,
    as in Claude Code); MCP tools (`mcp__…`) are not checked, as their servers may connect
    later. `unavailable` says why a known tool is missing here (WebSearch without the
    Messages API)."""

    names: frozenset[str]
    unavailable: Mapping[str, str] = field(default_factory=dict)

    def notices(self, definitions: Iterable[AgentDefinition]) -> list[str]:
        """One notice per tool name that some definitions list and the session lacks,
        naming those agents (a project's many agents listing one missing tool: one notice)."""
        listing: dict[str, list[str]] = {}
        for definition in definitions:
            for name in dict.fromkeys(n.split("(", 1)[0].strip() for n in definition.tools or ()):
                if name not in self.names and name != "*" and not name.startswith("mcp__"):
                    listing.setdefault(name, []).append(definition.name)
        return [self._notice(name, agents) for name, agents in listing.items()]

    def _notice(self, name: str, agents: list[str]) -> str:
        why = self.unavailable.get(name, f"no tool is called {name}")
        return (
            f"{name} is in the tools of agent(s) {', '.join(agents)}, but this session does not "
            f"offer it ({why}); they get the other tools they list"
        )


class AgentCatalog:
    """A session's agent types, re-read when a prompt starts (`refresh`), so agent files
    added or removed mid-session are announced by the agent-listing delta. Notices about a
    file are given once; with `tools`, so are tool names an agent lists that the session
    does not offer."""

    def __init__(
        self,
        cwd: Path,
        *,
        user_home: Path,
        trusted: bool,
        extra: Sequence[AgentDefinition] = (),
        on_notice: Callable[[str], None] | None = None,
        sources: SettingSources = SettingSources(),  # noqa: B008 - frozen, shared safely
        tools: ToolNames | None = None,
    ) -> None:
        self.cwd = cwd
        self.tools = tools
        self.user_home = user_home
        self.trusted = trusted
        self.sources = sources
        self.extra = tuple(extra)
        self.on_notice = on_notice
        self._told: set[str] = set()
        self.current = LoadedAgents(())
        self.refresh()

    def refresh(self) -> LoadedAgents:
        """Read the definitions again; new notices go to `on_notice`."""
        loaded = load_agents(
            self.cwd,
            user_home=self.user_home,
            trusted=self.trusted,
            extra=self.extra,
            sources=self.sources,
        )
        found = [*loaded.notices, *(self.tools.notices(loaded.definitions) if self.tools else ())]
        for notice in found:
            if notice not in self._told:
                self._told.add(notice)
                if self.on_notice is not None:
                    self.on_notice(notice)
        self.current = loaded
        return loaded
