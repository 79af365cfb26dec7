"""The Tool protocol and what a tool call sees.

A tool is: a name the model calls it by, a description, a pydantic input model (which gives
the JSON schema the model sees and validates what it sends), flags that drive scheduling
(`is_concurrency_safe`) and permissions (`is_read_only`), and `call()`, an async generator of
progress and exactly one `ToolResult`.

Errors: raise `ToolError` (or return a `ToolResult` with is_error) for anything the model
should read and react to. The executor turns every exception into an is_error tool_result;
a tool can never crash the loop.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from ..abort import AbortSignal
from ..errors import QueryloopError
from ..messages.blocks import DocumentBlock, ImageBlock, TextBlock, ToolUseBlock
from ..messages.interruption import Interruption
from ..messages.types import Message
from ..tasks.manager import TaskManager
from .file_access import LOCAL_FILES, FileAccess
from .services import FileTextSnapshot, HiddenPaths, SkillGrants, SubagentService, WebModels

if TYPE_CHECKING:
    from ..sandbox import ExecGuard, Sandbox

DEFAULT_MAX_RESULT_CHARS = 100_000

CURRENT_TOOL_USE_ID: ContextVar[str] = ContextVar("queryloop_tool_use_id", default="")
"""The id of the tool_use a tool's `call()` is running for (set by the executor), so a tool
that starts something lasting (a subagent, a background task) can link it to its call."""


class ToolError(QueryloopError):
    """A tool failed in a way the model should be told about (message is shown to it)."""


@dataclass(frozen=True, slots=True)
class ToolProgress:
    """Intermediate output of a running tool, for UIs (never sent to the model)."""

    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The one result of a tool call.

    `content` becomes the tool_result's content; `data` is structured output for UIs and
    hooks; `new_messages` are extra messages (for example attachments) to append after it.
    """

    content: str | tuple[TextBlock | ImageBlock | DocumentBlock, ...]
    is_error: bool = False
    data: Any = None
    new_messages: tuple[Message, ...] = ()
    interrupted: Interruption | None = None
    """Set by a tool that stopped on the abort signal before it finished: its result is a
    stand-in (`ToolResultBlock.interrupted`), so resume may redo the call."""


@dataclass(slots=True)
class FileReadRecord:
    """What the agent saw of a file when it last read or wrote it (Edit requires it)."""

    mtime_ns: int
    size: int
    partial: bool = False


class ToolObserver(Protocol):
    """Told when a tool call starts running and when it is done (the session report's
    timeline, the trace's tool spans). Called synchronously by the executor; must be quick
    and must not raise. `tool_started` is called in the asyncio task that runs the call, so
    a context variable it sets (the trace context) is seen by the call and what it starts,
    and by nothing else; `tool_finished` also comes for a call that never started."""

    def tool_started(self, block: ToolUseBlock) -> None: ...

    def tool_finished(
        self,
        block: ToolUseBlock,
        results: Sequence[Message],
        *,
        permission: DenialSource | None = None,
    ) -> None:
        """`permission`: who allowed the call, when it ran (a refusal's source is in its
        `permission_denied` record among `results`)."""
        ...


@dataclass(frozen=True, slots=True)
class ToolObservers:
    """Several observers of one thread's tool calls, told in order (timing, then trace)."""

    observers: tuple[ToolObserver, ...]

    def tool_started(self, block: ToolUseBlock) -> None:
        """Tell every observer that `block` started."""
        for observer in self.observers:
            observer.tool_started(block)

    def tool_finished(
        self,
        block: ToolUseBlock,
        results: Sequence[Message],
        *,
        permission: DenialSource | None = None,
    ) -> None:
        """Tell every observer that `block` is done."""
        for observer in self.observers:
            observer.tool_finished(block, results, permission=permission)


def observers(*found: ToolObserver | None) -> ToolObserver | None:
    """One observer for those of `found` that exist and listen (None when none does): an
    observer whose `enabled` is False (an untraced session's trace) is left out."""
    present = tuple(o for o in found if o is not None and getattr(o, "enabled", True))
    if len(present) <= 1:
        return present[0] if present else None
    return ToolObservers(present)


@dataclass
class ToolContext:
    """Mutable per-session state shared by tool calls.

    The Bash tool keeps `cwd` across calls; Read records `read_files` so Edit and Write can
    insist the file was read and has not changed since; TodoWrite keeps `todos`.
    """

    cwd: Path
    abort: AbortSignal = field(default_factory=AbortSignal)
    additional_dirs: list[Path] = field(default_factory=list)
    read_files: dict[str, FileReadRecord] = field(default_factory=dict)
    todos: list[dict[str, Any]] = field(default_factory=list)
    session_dir: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)
    """Free-form state for users' own tools and extensions (keys should be namespaced);
    queryloop's own services are the typed fields below."""
    tasks: TaskManager | None = None
    """The session's background tasks (Bash run_in_background, TaskOutput, TaskStop, background
    agents); None where the session has none."""
    subagents: SubagentService | None = None
    """This thread's subagent host (`queryloop.agents.SubagentHost`) for the Agent tool; each
    subagent's context holds its own, one level deeper."""
    agent_id: str | None = None
    """The agent id of a subagent's thread (None on the main thread): background tasks it
    starts are its own."""
    hidden_paths: HiddenPaths | None = None
    """What `Read` deny rules hide from Grep, Glob and LS (`permissions.ReadDenials`, built
    once per session; None: nothing is hidden). Tools ask `hidden()`."""
    loaded_deferred_tools: list[str] = field(default_factory=list)
    """Names of the deferred tools ToolSearch loaded, in load order (`tools.deferred`)."""
    file_snapshots: dict[str, FileTextSnapshot] = field(default_factory=dict)
    """path -> the text the agent last saw of it, so a changed file is announced as a diff."""
    original_cwd: Path | None = None
    """The folder the session started in (defaults to `cwd`). A `cd` in Bash moves `cwd`
    but must not shrink the folders the agent may work in."""
    observer: ToolObserver | None = None
    """Timing of tool calls for the transcript (see `queryloop.session.timing`)."""
    sandbox: Sandbox | None = None
    """The session's Bash sandbox (`queryloop.sandbox`, from the `sandbox` settings); None
    when it is off. Bash and background shell tasks run inside it."""
    exec_guard: ExecGuard | None = None
    """The session's exec check (`queryloop.sandbox.ExecGuard`): every program a Bash
    command or background task executes meets the deny rules; None: the parse alone decides."""
    grants: SkillGrants = field(default_factory=SkillGrants)
    """The `allowed-tools` of the skills invoked during the current prompt (the session's one
    object, shared with its subagents' contexts; the permission checker reads it)."""
    web: WebModels = field(default_factory=WebModels)
    """The models WebSearch and WebFetch ask (the session's, shared with its subagents);
    the default asks none: WebSearch is unavailable and WebFetch returns the page itself."""
    files: FileAccess = LOCAL_FILES
    """Where Read, Edit, MultiEdit and Write get and put a file's text (`tools.file_access`):
    the disk, or the editor hosting the agent (its unsaved buffers); shared with subagents."""

    def __post_init__(self) -> None:
        if self.original_cwd is None:
            self.original_cwd = self.cwd

    def child(
        self,
        abort: AbortSignal,
        *,
        subagents: SubagentService | None = None,
        agent_id: str | None = None,
        observer: ToolObserver | None = None,
    ) -> ToolContext:
        """A subagent's context: the session's services shared (tasks, sandbox, exec check,
        hidden paths, the prompt's skill grants, the web tools' models), the per-thread state
        copied (folders, env, what was read, loaded deferred tools), its own todos, abort
        signal, subagent host, agent id and observer. Every field is decided here, next to
        its declaration."""
        return replace(
            self,
            abort=abort,
            subagents=subagents,
            agent_id=agent_id,
            observer=observer,
            additional_dirs=list(self.additional_dirs),
            read_files=dict(self.read_files),
            todos=[],
            env=dict(self.env),
            extras=dict(self.extras),
            loaded_deferred_tools=list(self.loaded_deferred_tools),
            file_snapshots=dict(self.file_snapshots),
        )

    def hidden(self) -> Callable[[Path], bool] | None:
        """What `Read` deny rules hide from a tool working in `cwd` (None: nothing)."""
        return None if self.hidden_paths is None else self.hidden_paths.hides(self.cwd)

    @property
    def working_dirs(self) -> list[Path]:
        """The folders the agent may work in without asking: the session's start folder,
        the current cwd and the additional dirs."""
        dirs = [self.cwd, *self.additional_dirs]
        if self.original_cwd is not None and self.original_cwd not in dirs:
            dirs.insert(0, self.original_cwd)
        return dirs

    def resolve(self, path: str) -> Path:
        """An absolute path, relative ones taken from `cwd`; `~` is expanded."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else self.cwd / p


PermissionBehavior = Literal["allow", "deny", "ask", "passthrough", "defer"]
"""`defer` (from `can_use_tool`): put the call off for a decision in a later process
(`messages.deferral`); the run ends with terminal `deferred`."""


class DenialSource(StrEnum):
    """Who decided a tool call: who refused it (`RunResult.denials`, the `permission_denials`
    of print mode) or, for a call that ran, who allowed it (the trace's
    `queryloop.permission.decision_source`)."""

    RULE = "rule"
    """A rule (settings, `--allowed-tools` / `--disallowed-tools`, the Agent's options, an
    "always" answer); a tool the developer passed to the Agent is allowed as by a rule."""
    MODE = "mode"
    """The permission mode: plan mode refuses what is not read-only; read-only calls,
    acceptEdits' edits, bypassPermissions and sandboxed Bash are allowed by it."""
    TOOL = "tool"
    """The tool's own permission check."""
    HOOK = "hook"
    """A PreToolUse hook."""
    USER = "user"
    """The person at the prompt, or the program's `can_use_tool` callback."""
    NO_APPROVER = "no_approver"
    """The call needed approval and nobody could give it (headless, no `can_use_tool`)."""


@dataclass(frozen=True, slots=True)
class PermissionDecision:
    """A verdict on one tool call. `passthrough` leaves it to the rules and the mode."""

    behavior: PermissionBehavior
    message: str = ""
    updated_input: Mapping[str, Any] | None = None
    rule: str | None = None
    source: DenialSource | None = None
    """Who decided: for a deny, who refused (the executor records it with the denial); for
    an allow, who allowed (the trace records it)."""


ALLOW = PermissionDecision("allow")
PASSTHROUGH = PermissionDecision("passthrough")

InputT = TypeVar("InputT", bound=BaseModel)


@runtime_checkable
class Tool(Protocol):
    """What the executor needs of a tool."""

    name: str
    description: str
    input_model: type[BaseModel]
    max_result_chars: int

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema the model sees (type object)."""
        ...

    def is_concurrency_safe(self, input: Any) -> bool:
        """True when this call may run in parallel with other safe calls."""
        ...

    def is_read_only(self, input: Any) -> bool:
        """True when this call changes nothing (plan mode allows only these)."""
        ...

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        """An actionable error message when the input cannot run, else None."""
        ...

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        """The tool's own view (for example: a path outside the working folders asks)."""
        ...

    def permission_subject(self, input: Any) -> str | None:
        """What permission rules match against: a command for Bash, a path for file tools."""
        ...

    def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        """Run the tool: any number of ToolProgress, then exactly one ToolResult."""
        ...


class BaseTool(Generic[InputT]):
    """Defaults for the Tool protocol; subclasses set the class attributes and `call`."""

    name: str = ""
    description: str = ""
    input_model: type[BaseModel] = BaseModel
    max_result_chars: int = DEFAULT_MAX_RESULT_CHARS
    read_only: bool = False
    concurrency_safe: bool = False

    def input_schema(self) -> dict[str, Any]:
        return copy.deepcopy(model_schema(self.input_model))

    def is_concurrency_safe(self, input: Any) -> bool:
        return self.concurrency_safe

    def is_read_only(self, input: Any) -> bool:
        return self.read_only

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        return None

    async def check_permissions(self, input: Any, ctx: ToolContext) -> PermissionDecision:
        return PASSTHROUGH

    def permission_subject(self, input: Any) -> str | None:
        return None

    async def call(  # pragma: no cover - abstract
        self, input: Any, ctx: ToolContext
    ) -> AsyncIterator[ToolProgress | ToolResult]:
        raise NotImplementedError
        yield


class PermissionChecker(Protocol):
    """Decides whether a validated tool call may run (modes, rules, callbacks, prompts).

    Returns allow (optionally with an updated input) or deny with a message the model reads.
    `hook` is what PreToolUse hooks said: `allow` skips the question as an allow rule would
    (never a deny rule, ask rule or what fails closed), `ask` asks even where rules or the
    mode would allow (Claude Code's permissionDecision).
    """

    async def check(
        self,
        tool: Tool,
        input: Mapping[str, Any],
        ctx: ToolContext,
        *,
        hook: PreToolUseOutcome | None = None,
    ) -> PermissionDecision: ...


@dataclass(frozen=True, slots=True)
class PreToolUseOutcome:
    """What PreToolUse hooks decided. `decision` None means no opinion; `defer` puts the
    call off for a later decision (Claude Code's `permissionDecision: "defer"`)."""

    decision: Literal["allow", "deny", "ask", "defer"] | None = None
    reason: str = ""
    updated_input: Mapping[str, Any] | None = None
    stop_reason: str | None = None
    """Set when a hook asked to stop the whole loop (terminal hook_stopped)."""
    additional_context: str | None = None
    """Text for the model, added beside the call's result."""
    decided_by: str = ""
    """The label of the hook whose answer is `decision` (who deferred a call)."""


@dataclass(frozen=True, slots=True)
class PostToolUseOutcome:
    """What PostToolUse hooks said: context for the model, a block message, or a stop."""

    additional_context: str | None = None
    block_reason: str | None = None
    stop_reason: str | None = None


class ToolHooks(Protocol):
    """Hook points the executor calls around every tool call."""

    async def pre_tool_use(
        self, tool_name: str, input: Mapping[str, Any], tool_use_id: str, ctx: ToolContext
    ) -> PreToolUseOutcome: ...

    async def post_tool_use(
        self,
        tool_name: str,
        input: Mapping[str, Any],
        result: ToolResult,
        tool_use_id: str,
        ctx: ToolContext,
    ) -> PostToolUseOutcome: ...


class ToolEventHooks(Protocol):
    """Further hook points of the executor (a `HookRunner` has them; a plain `ToolHooks`
    need not): a tool that failed, a call refused with nobody asked, a changed cwd."""

    async def post_tool_use_failure(
        self,
        tool_name: str,
        input: Mapping[str, Any],
        error: str,
        tool_use_id: str,
        ctx: ToolContext,
        *,
        is_interrupt: bool = False,
        duration_ms: int | None = None,
    ) -> PostToolUseOutcome: ...

    async def permission_denied(
        self, tool_name: str, input: Mapping[str, Any], tool_use_id: str, reason: str
    ) -> bool: ...

    async def cwd_changed(self, old: Path, new: Path) -> None: ...


_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], dict[str, Any]] = weakref.WeakKeyDictionary()


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of an input model as the model sees it (no title; type object).

    Rendered once per model class and kept while the class lives: pydantic renders it anew
    on every call (milliseconds per tool), and every session of a process asked for every
    tool's (bench/sdk_concurrency.py). Callers get a copy to change as they like.
    """
    schema = _SCHEMAS.get(model)
    if schema is None:
        schema = model.model_json_schema()
        schema.pop("title", None)
        schema.setdefault("type", "object")
        _SCHEMAS[model] = schema
    return schema
