"""The Agent's options: `AgentOptions` (the frozen, documented set, grouped by concern) and
`AgentKwargs` (the same names as typed keyword arguments of `Agent(...)`, `Agent.resume` and
`Agent.continue_latest`, so an IDE completes them and mypy catches a wrong name or type).

The groups' fields are the declaration (names, types, defaults, documentation): a keyword of
`Agent(...)` is a field of one group (`option_groups`), and `AgentOptions.of` puts it there.
`AgentKwargs` repeats names and types because a type checker cannot derive a TypedDict from
dataclasses, and the command line's Agent-level options (`cli.args.CliOptions`, the fields
marked `agent_option`) repeat names, types and defaults because `queryloop --help` must not
import this module; `tests/agent/test_agent_sdk.py` and
`tests/cli/test_cli_args.py::test_the_options_are_declared_once` prove them equal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import Field, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypedDict, TypeVar, cast

from ..agents.definitions import AgentDefinition
from ..agents.host import DEFAULT_MAX_DEPTH
from ..compact.policy import CompactionName
from ..config.discovery import SettingSources
from ..errors import ConfigError
from ..hooks.config import HookCallable, HookMatcher
from ..hooks.types import HookStatus, StopHook
from ..messages.types import Message
from ..permissions.checker import CanUseTool
from ..permissions.modes import PermissionMode, parse_mode
from ..providers.base import ModelProvider
from ..providers.retry import RetryPolicy
from ..session.store_api import SessionStore
from ..tools.base import Tool
from ..tools.builtin import selected_builtin_names
from ..tools.file_access import LOCAL_FILES, FileAccess
from ..tools.structured_output import OutputSchema

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

    from ..context.cache_ttl import CacheTtlSetting

PermissionModeName = Literal["default", "acceptEdits", "plan", "bypassPermissions"]
"""Claude Code's permission mode names (`PermissionMode` values)."""

OutputType: TypeAlias = type[Any] | Mapping[str, Any]
"""What a prompt returns (`output_type`): a pydantic model, a dataclass, a TypedDict, or a
JSON Schema dict."""

_DictT_co = TypeVar("_DictT_co", covariant=True)


class SchemaDict(Protocol[_DictT_co]):
    """A JSON Schema dict as `Agent(output_type=...)` types it: its `copy()` is its own type,
    so mypy binds the Agent's output type to the dict's (`Agent[dict[str, Any]]`) with one
    signature, no overloads (whose errors would no longer name a mistyped keyword)."""

    def copy(self) -> _DictT_co: ...

    def keys(self) -> Any: ...


HooksArg = Mapping[str, Sequence[HookMatcher | HookCallable]]
"""Python hooks by event name: `{"Stop": [fn], "PreToolUse": [HookMatcher("Bash", [fn])]}`."""


@dataclass(frozen=True)
class ModelOptions:
    """Which model answers and how it is asked: the model and its provider, the system
    prompt, the output limit, thinking, the fallback and the small model for tool-use
    summaries (pydantic-ai's `ModelSettings`)."""

    model: str | None = None
    """The main model (`openai:NAME` for an OpenAI-compatible server); default: the
    `QUERYLOOP_MODEL` variable, the settings' `model`, else claude-sonnet-5-5."""
    provider: ModelProvider | None = None
    """A provider you built yourself (it wins over `model`'s provider and `base_url`)."""
    base_url: str | None = None
    """The API endpoint of the provider queryloop builds (default: the SDKs' env vars)."""
    retry: RetryPolicy | None = None
    """Retries of the provider queryloop builds (overloads beyond it switch to the fallback)."""
    fallback_model: str | None = None
    """The model to switch to when the main one stays overloaded."""
    max_tokens: int | None = None
    """Output limit per response (default 8,192, raised to the model's maximum on a cut-off)."""
    thinking: Mapping[str, Any] | None = None
    """Extended thinking, the API's shape: `{"type": "enabled", "budget_tokens": 4000}`."""
    system_prompt: str | None = None
    """Replaces queryloop's own instructions (the static part of the system prompt)."""
    append_system_prompt: str | None = None
    """Text appended to the system prompt."""
    tool_use_summaries: bool = False
    """Write a one-line summary of each batch of tool calls with a small fast model, beside
    the next model call (`ToolUseSummaryMessage`s; their cost is counted). The REPL turns
    this on; off by default headless and in the SDK (docs/loop.md)."""
    summary_model: str | None = None
    """The model for tool-use summaries (default: Haiku on Anthropic; on an OpenAI-compatible
    server none, so no summaries, unless one is named here)."""


@dataclass(frozen=True)
class LimitOptions:
    """When a prompt stops on its own (pydantic-ai's `UsageLimits`)."""

    max_turns: int | None = None
    """Stop a prompt after this many turns (docs/loop.md, "Turns"): terminal `max_turns`."""
    token_budget: int | None = None
    """Keep working until this many output tokens are spent (stops when progress stalls)."""


@dataclass(frozen=True)
class OutputOptions:
    """What a prompt returns besides its text (docs/structured-output.md)."""

    output_type: OutputType | None = None
    """A pydantic model, a dataclass, a TypedDict or a JSON Schema dict: each prompt ends
    when the model returns a valid value through the `StructuredOutput` tool, and
    `RunResult.output` holds it (an instance of the type; the dict for a schema). None: the
    prompt returns text only. A schema that cannot work is a `ConfigError` at once."""


@dataclass(frozen=True)
class ToolOptions:
    """The tools the model is offered: which built-in ones, yours, MCP servers', and when
    MCP tools go behind ToolSearch."""

    tools: Sequence[Tool] = ()
    """Your own tools (`@tool` functions, `BaseTool` subclasses), offered beside the built-in
    ones. A tool you pass is one you mean the model to use: it runs without asking, unless a
    deny or ask rule names it, plan mode refuses it (not read-only) or it asks for approval
    itself (`@tool(needs_approval=True)`; then `can_use_tool` decides)."""
    builtin_tools: bool | Sequence[str] = True
    """Which built-in tools to offer: all (True), none (False), or these names
    (`["Read", "Grep"]`). Built-in tools that edit or run commands keep their permission
    checks."""
    mcp_config: Path | None = None
    """An MCP servers file (`.mcp.json` shape) besides the project's `.mcp.json`."""
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None
    """MCP servers given in code: the `mcpServers` object of a `.mcp.json`
    (`{"files": {"command": "python", "args": ["server.py"]}, "api": {"type": "http",
    "url": ...}}`), over the files' servers of the same name. Checked like the files: a bad
    entry stops the session before it starts."""
    mcp_wait: bool = True
    """Whether `start()` waits for every MCP server to connect or fail (each within
    `MCP_TIMEOUT`, all at once). False: servers still connecting join later, each announced
    by a notice when its tools are ready (the REPL, whose prompt never waits for them)."""
    tool_search: str | int | None = None
    """When MCP tools go behind ToolSearch: "auto" (default: above 10% of the context window),
    "auto:N" (N percent), a token threshold, "always" or "never" (docs/context.md). None = the
    settings' "toolSearch", else "auto"."""
    file_access: FileAccess = LOCAL_FILES
    """Where Read, Edit, MultiEdit and Write get and put a file's text: the local disk, or
    your `FileAccess` (an editor's buffers, as `queryloop acp` passes). Paths, permissions,
    read-state and images stay on the disk (docs/tools.md)."""


@dataclass(frozen=True)
class PermissionOptions:
    """Which tool calls run, which ask, which are refused, and who decides the ones that ask."""

    permission_mode: PermissionModeName | PermissionMode | None = None
    """default, acceptEdits, plan or bypassPermissions (default: the settings' defaultMode)."""
    allowed_tools: Sequence[str] = ()
    """Allow rules (`"Bash(npm test:*)"`, `"Edit(src/**)"`), like `--allowed-tools`."""
    disallowed_tools: Sequence[str] = ()
    """Deny rules, like `--disallowed-tools`; nothing overrides them."""
    can_use_tool: CanUseTool | None = None
    """Decides the calls that need approval: `(tool_name, input, request)` -> True/False, a
    `PermissionAllow`/`PermissionDeny`, or a `PermissionDecision`; sync or async. Without it
    such calls are refused with a message saying how to allow them."""


@dataclass(frozen=True)
class ContextOptions:
    """How big the context may grow and how it shrinks (compaction, collapse, prompt cache)."""

    context_window: int | None = None
    """Override the model table's context window (e.g. a local model)."""
    autocompact_threshold: int | None = None
    """Tokens at which to compact; None = the model's default threshold."""
    compaction: CompactionName | None = None
    """When the context shrinks: "default" (summarise at the autocompact threshold) or
    "economy" (clear old tool results and summarise as soon as carrying them costs more
    than shrinking; docs/compaction.md, "Choosing a policy"). None = the settings'
    "compaction", else "default"."""
    context_collapse: bool = False
    """Collapse old rounds into one-line summaries (a read-time view) before a model-written
    autocompact summary is needed. Off by default: on the 80-turn benchmark a model-written
    summary cost 29% less and kept more of the task (docs/benchmarks.md)."""
    cache_ttl: CacheTtlSetting | None = None
    """How long prompt-cache entries live: "5m", "1h" (writes cost 2x input instead of
    1.25x, and survive an hour's pause) or "auto" (1h once the gaps between requests run
    past 4 minutes; docs/context.md, "Cache lifetime"). None = the settings' "cacheTtl",
    else "5m"."""


@dataclass(frozen=True)
class SessionOptions:
    """The conversation's identity, where it is stored and what it starts from."""

    session_id: str | None = None
    """The id of a new session (default: a fresh uuid)."""
    persist: bool = True
    """Write the transcript (`$QUERYLOOP_HOME/projects/...`); False keeps it in memory."""
    home: Path | None = None
    """$QUERYLOOP_HOME (default: the variable, else ~/.queryloop)."""
    history: Sequence[Message] = ()
    """Messages to start the conversation from (a seeded or imported history)."""
    session_store: SessionStore | str | None = None
    """Where transcripts live: a `SessionStore` (yours, or `queryloop.session`'s) or a spec,
    `sqlite:///PATH` or `postgresql://...` (docs/sessions.md). None: the
    `QUERYLOOP_SESSION_STORE` variable, else the settings' `sessionStore`, else the JSONL
    files under `home`."""


@dataclass(frozen=True)
class WorkspaceOptions:
    """The folders the agent works in and which of their settings it reads."""

    cwd: Path = field(default_factory=Path.cwd)
    """The project folder the agent works in (`~` expanded, made absolute)."""
    add_dirs: Sequence[Path] = ()
    """Folders besides `cwd` the agent may work in (Claude Code's `--add-dir`; added to the
    settings' `additionalDirectories`)."""
    setting_sources: Sequence[str] | None = None
    """Which files to read, Claude Code's `--setting-sources`: any of "user" (the user's
    settings, memory, agents, skills, commands), "project" (the project's) and "local"
    (`settings.local.json`); None: all; []: none of them. Managed settings are always read;
    a project's files still need a trusted folder."""
    trust: bool | None = None
    """Trust the folder's project settings (hooks, MCP servers, allow rules); None: as
    recorded by `queryloop trust`."""
    plugin_dirs: Sequence[Path] = ()
    """Plugin folders in Claude Code's layout to load (`--plugin-dir`, docs/plugins.md),
    besides the plugins the settings' `enabledPlugins` name."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Environment variables for tools and hooks (over the settings' `env`)."""


@dataclass(frozen=True)
class CallbackOptions:
    """What the program is told, and may decide, while the agent runs."""

    hooks: HooksArg | None = None
    """Python hooks by event name, added to the settings files' hooks."""
    stop_hooks: Sequence[StopHook] = ()
    """Async callables asked whether the agent may stop (they can make it go on)."""
    on_notice: Callable[[str], None] | None = None
    """Called with each notice for the user: ignored untrusted settings, broken settings
    files, MCP servers that failed, hook warnings. `Agent.notices` keeps them too."""
    on_hook_status: Callable[[HookStatus], None] | None = None
    """Called when a hook with a `statusMessage` starts and ends (the CLI's spinner text)."""
    tracer_provider: TracerProvider | None = None
    """The OpenTelemetry `TracerProvider` that gets the session's spans (docs/telemetry.md);
    None: the provider registered with the OpenTelemetry API, if any (else nothing is
    traced). Message content is recorded only when
    `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is true."""


@dataclass(frozen=True)
class SubagentOptions:
    """Which subagent types exist and how deep they may nest."""

    agents: Sequence[AgentDefinition] = ()
    """Subagent types besides the built-in general-purpose one and the agent files
    (`.queryloop/agents/*.md`, `$QUERYLOOP_HOME/agents/*.md`); these win by name."""
    max_subagent_depth: int = DEFAULT_MAX_DEPTH
    """How deep subagents may nest (1: subagents cannot start subagents)."""


@dataclass(frozen=True)
class AgentOptions:
    """Every knob of an Agent, grouped by concern; each group's fields are the keywords of
    `Agent(...)` (`Agent(max_turns=3)` sets `options.limits.max_turns`). `None` means "use
    the default / the settings files"."""

    model: ModelOptions = field(default_factory=ModelOptions)
    limits: LimitOptions = field(default_factory=LimitOptions)
    output: OutputOptions = field(default_factory=OutputOptions)
    tools: ToolOptions = field(default_factory=ToolOptions)
    permissions: PermissionOptions = field(default_factory=PermissionOptions)
    context: ContextOptions = field(default_factory=ContextOptions)
    session: SessionOptions = field(default_factory=SessionOptions)
    workspace: WorkspaceOptions = field(default_factory=WorkspaceOptions)
    callbacks: CallbackOptions = field(default_factory=CallbackOptions)
    subagents: SubagentOptions = field(default_factory=SubagentOptions)

    @classmethod
    def of(cls, **values: Any) -> AgentOptions:
        """The options from flat keywords, each put in its group as given (`Agent(...)`
        also checks and normalises them: `make_options`). An unknown name is a TypeError,
        as for any constructor."""
        unknown = sorted(set(values) - set(option_groups()))
        if unknown:
            raise TypeError(f"unknown Agent option(s): {', '.join(unknown)}")
        return cls(
            **{
                group: kind(**{n: values[n] for n in _names(kind) if n in values})
                for group, kind in _group_kinds().items()
            }
        )


def option_fields() -> dict[str, Field[Any]]:
    """Every option (a keyword of `Agent(...)`) and its declaration, the field of its group,
    in declaration order."""
    return {f.name: f for kind in _group_kinds().values() for f in fields(kind)}


def option_groups() -> dict[str, str]:
    """Each option's group: the `AgentOptions` field that holds it (`max_turns` -> `limits`)."""
    return {n: group for group, kind in _group_kinds().items() for n in _names(kind)}


def _group_kinds() -> dict[str, type[Any]]:
    """`AgentOptions`' groups by field name: each field's default factory is its class."""
    return {f.name: cast("type[Any]", f.default_factory) for f in fields(AgentOptions)}


def _names(kind: type[Any]) -> list[str]:
    return [f.name for f in fields(kind)]


OWN_PARAMETERS = frozenset({"model", "output_type"})
"""The options `Agent(...)` takes as parameters of their own, not in `AgentKwargs`: `model`
(the first positional argument) and `output_type` (its type is the Agent's type parameter,
`Agent[OutputT]`, which a TypedDict item cannot bind)."""


class AgentKwargs(TypedDict, total=False):
    """The keyword arguments of `Agent(...)`: every field of the `AgentOptions` groups but
    the `OWN_PARAMETERS` (`model`, `output_type`), with `cwd`, `home`, `mcp_config` and `add_dirs`
    also taking strings. Each is documented on its group (`ModelOptions`, `LimitOptions`,
    `ToolOptions`, `PermissionOptions`, `ContextOptions`, `SessionOptions`,
    `WorkspaceOptions`, `CallbackOptions`, `SubagentOptions`)."""

    provider: ModelProvider | None
    base_url: str | None
    retry: RetryPolicy | None
    tools: Sequence[Tool]
    builtin_tools: bool | Sequence[str]
    system_prompt: str | None
    append_system_prompt: str | None
    max_turns: int | None
    max_tokens: int | None
    fallback_model: str | None
    hooks: HooksArg | None
    stop_hooks: Sequence[StopHook]
    permission_mode: PermissionModeName | PermissionMode | None
    allowed_tools: Sequence[str]
    disallowed_tools: Sequence[str]
    can_use_tool: CanUseTool | None
    on_notice: Callable[[str], None] | None
    on_hook_status: Callable[[HookStatus], None] | None
    cwd: str | Path | None
    mcp_config: str | Path | None
    plugin_dirs: Sequence[Path]
    mcp_servers: Mapping[str, Mapping[str, Any]] | None
    mcp_wait: bool
    add_dirs: Sequence[str | Path]
    setting_sources: Sequence[str] | None
    session_id: str | None
    persist: bool
    home: str | Path | None
    trust: bool | None
    thinking: Mapping[str, Any] | None
    token_budget: int | None
    autocompact_threshold: int | None
    context_collapse: bool
    context_window: int | None
    compaction: CompactionName | None
    tool_search: str | int | None
    file_access: FileAccess
    cache_ttl: CacheTtlSetting | None
    env: Mapping[str, str]
    history: Sequence[Message]
    session_store: SessionStore | str | None
    tool_use_summaries: bool
    summary_model: str | None
    agents: Sequence[AgentDefinition]
    max_subagent_depth: int
    tracer_provider: TracerProvider | None


def make_options(
    model: str | None, kwargs: Mapping[str, Any], output_type: object = None
) -> AgentOptions:
    """`AgentOptions` from `Agent(...)`'s arguments: unknown names are a `ConfigError` (a
    dict built at run time, such as a batch task's options, gets no type check), paths are
    made absolute and the permission mode and the output type are checked now, not at the
    first prompt."""
    unknown = sorted(set(kwargs) - _KWARG_NAMES)
    if unknown:
        raise ConfigError(
            f"unknown Agent option(s) {', '.join(unknown)}; "
            f"valid options: {', '.join(sorted(_KWARG_NAMES))}"
        )
    values = dict(kwargs)
    values["cwd"] = Path(values.get("cwd") or Path.cwd()).expanduser().resolve()
    for name in ("home", "mcp_config"):
        if values.get(name) is not None:
            values[name] = Path(values[name]).expanduser()
    values["plugin_dirs"] = tuple(Path(d).expanduser() for d in values.get("plugin_dirs", ()))
    try:
        SettingSources.of(values.get("setting_sources"))
    except ValueError as exc:
        raise ConfigError(f"setting_sources: {exc}") from None
    values["add_dirs"] = tuple(
        (values["cwd"] / Path(d).expanduser()).resolve() for d in values.get("add_dirs", ())
    )
    mode = values.get("permission_mode")
    if isinstance(mode, str):
        values["permission_mode"] = parse_mode(mode)
    values["tools"] = _checked_tools(values.get("tools", ()), values.get("builtin_tools", True))
    if output_type is not None:
        OutputSchema.of(output_type)  # raises ConfigError for a schema that cannot work
    return AgentOptions.of(model=model, output_type=output_type, **values)


def _checked_tools(tools: Sequence[Any], builtin: bool | Sequence[str]) -> tuple[Tool, ...]:
    """The developer's tools, refusing what cannot work: a plain function (it needs
    `@tool`), and a name used twice or taken by an offered built-in tool."""
    for item in tools:
        if not isinstance(item, Tool):
            what = getattr(item, "__name__", type(item).__name__)
            raise ConfigError(
                f"tools: {what!r} is not a tool; decorate a function with @tool "
                "(from queryloop import tool) or subclass queryloop.tools.BaseTool"
            )
    names = [t.name for t in tools]
    taken = selected_builtin_names(builtin)
    clashes = sorted({n for n in names if names.count(n) > 1} | (set(names) & taken))
    if clashes:
        raise ConfigError(
            f"tools: the name(s) {', '.join(clashes)} are used twice (a built-in tool has "
            "it, or two of yours do); rename yours, or leave the built-in one out with "
            "builtin_tools=[...]"
        )
    return tuple(tools)


_KWARG_NAMES = frozenset(option_fields()) - OWN_PARAMETERS
