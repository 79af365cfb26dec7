"""`Agent`: the SDK front. It owns one conversation and drives `query()` for each prompt."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, Unpack, cast

from typing_extensions import TypeVar

from ..context.queue import PromptQueue

if TYPE_CHECKING:
    from ..agents.definitions import AgentDefinition
    from ..checkpoints import Checkpoint, RewindMode, RewindOutcome
    from ..config.status_line import StatusLineSetting
    from ..context.user_context import MemoryFile
    from ..permissions.rules import RuleSet
    from ..report.costs import CostBreakdown
    from ..skills import Skill
    from ..tools.mcp import McpServerStatus
    from ..tools.mcp_login import LoginResult
from ..errors import ConfigError, QueryloopError
from ..loop.deferred import Decision, check_decisions, resolve_deferred
from ..loop.events import (
    CompactionEvent,
    CompactTrigger,
    LoopEvent,
    MessageEvent,
    RequestStart,
    StreamDelta,
    TerminalEvent,
    TransitionEvent,
)
from ..loop.query import compaction_event, query
from ..loop.reasons import Terminal
from ..messages.constructors import answer_unanswered, result_ids, tool_uses_of
from ..messages.deferral import can_continue
from ..messages.interruption import Interruption
from ..messages.types import AssistantMessage, Message
from ..messages.usage import Usage
from ..permissions.modes import PermissionMode, parse_mode
from ..providers.base import MessageComplete
from ..session import LoadedSession, Session, SessionTotals, new_session_id
from ..session.branching import truncate_at
from ..session.files import restore_read_state
from ..session.stores import TranscriptRef
from ..tasks import TaskManager
from .locate import locate_latest, locate_session
from .options import AgentKwargs, AgentOptions, SchemaDict, make_options
from .prompts import prepare_prompt
from .result import OutputT, RunRecorder, RunResult
from .runtime import Runtime
from .started import AgentState, Started, Unstarted

ResumedT = TypeVar("ResumedT", default=None)
"""`Agent.resume` and `Agent.continue_latest`'s output type (as `OutputT` for `Agent(...)`)."""


class Agent(Generic[OutputT]):
    """A coding agent you can embed.

        agent = Agent("claude-sonnet-5-5", tools=[my_tool], cwd="~/project")
        result = await agent.run("Fix the failing test")
        print(result.terminal, result.text, result.cost_usd, result.denials)

    Several prompts in a row continue the same conversation; every message is appended to
    the session transcript as it is created, so `Agent.resume(session_id)` picks it up.
    With `output_type=X` it is an `Agent[X]`: each `RunResult[X].output` is an X
    (docs/structured-output.md).
    """

    def __init__(
        self: Agent[OutputT],
        model: str | None = None,
        *,
        output_type: type[OutputT] | SchemaDict[OutputT] | None = None,
        **options: Unpack[AgentKwargs],
    ) -> None:
        """Create an agent (nothing starts until the first prompt or `start()`).

        Args:
            model: The main model, e.g. "claude-sonnet-5-5", or "openai:NAME" for an
                OpenAI-compatible server. Default: `QUERYLOOP_MODEL`, the settings' model.
            output_type: What each prompt returns besides its text: a pydantic model, a
                dataclass, a TypedDict or a JSON Schema dict (`RunResult.output`).
            **options: Any field of the `AgentOptions` groups, each documented there. The
                common ones: `tools` (your tools, beside the built-in ones, allowed without
                asking), `builtin_tools`, `cwd`, `permission_mode`, `allowed_tools`,
                `disallowed_tools`, `can_use_tool`, `system_prompt`, `max_turns`, `hooks`.

        Raises:
            ConfigError: an unknown option, an unknown permission mode, two tools with
                one name, or an output type that is no valid schema.
        """
        self._open_new(make_options(model, options, output_type))

    def _open_new(self, options: AgentOptions) -> None:
        """Set the agent up around a new session (the options' id and history, if given)."""
        new = options.session
        self._open(options, Session(new.session_id or new_session_id(), messages=new.history))

    def _open(
        self, options: AgentOptions, session: Session, resumed: LoadedSession | None = None
    ) -> None:
        """Set the agent up around `session`, the one it continues when `resumed`."""
        self.options = options
        self.session = session
        """The conversation: its one message array, usage, cost and transcript."""
        self.prompt_queue = PromptQueue()
        """Prompts queued while a turn runs (`queue`); the runtime drains it between turns."""
        self.last_terminal: TerminalEvent | None = None
        self.last_result: RunResult[OutputT] | None = None
        """The result of the last prompt, set when its `stream()` ends (also when it was
        cancelled: then its terminal is `aborted_streaming`)."""
        self._state: AgentState = Unstarted(options, session, resumed)
        self._setup_lock = asyncio.Lock()
        self._running = False
        self._decisions: dict[str, Decision] = {}
        """Decisions on deferred calls, acted on when the next run starts."""

    # ---- construction -------------------------------------------------------------------

    @classmethod
    def resume(
        cls,
        session: str | Path,
        model: str | None = None,
        *,
        decisions: Mapping[str, Decision] | None = None,
        output_type: type[ResumedT] | SchemaDict[ResumedT] | None = None,
        at: str | None = None,
        **options: Unpack[AgentKwargs],
    ) -> Agent[ResumedT]:
        """Continue a stored session (an id, an id prefix, or a `.jsonl` transcript path), in
        the session store the options choose (`session_store`, docs/sessions.md), with
        `output_type` as for `Agent(...)`. `at`, a message uuid, resumes the conversation at
        that message: the messages after it are voided in the transcript first
        (`queryloop.sessions.resume_session_at`).

        `decisions` answers tool calls the session deferred (`RunResult.deferred`): tool_use
        id -> `PermissionAllow()` or `PermissionDeny(message)`. They are acted on when the
        next run starts, before anything is sent: `await agent.run()` continues without a
        new prompt, `await agent.run(prompt)` with one (docs/approvals.md).

        Raises:
            DeferralMismatchError: a pending record does not match its tool_use.
            UnknownDeferralError: a decision names no pending call.
        """
        chosen = make_options(model, options, output_type)
        agent = cls._resumed(chosen, locate_session(chosen, str(session)), at, decisions)
        return cast("Agent[ResumedT]", agent)

    @classmethod
    def continue_latest(
        cls,
        model: str | None = None,
        *,
        output_type: type[ResumedT] | SchemaDict[ResumedT] | None = None,
        **options: Unpack[AgentKwargs],
    ) -> Agent[ResumedT]:
        """Continue the most recent session of this project (a new one if there is none)."""
        wanted = make_options(model, options, output_type)
        latest = locate_latest(wanted)
        if latest is None:
            agent = cast("Agent[ResumedT]", cls.__new__(cls))
            agent._open_new(wanted)
            return agent
        return cast("Agent[ResumedT]", cls._resumed(wanted, latest, None, None))

    @classmethod
    def _resumed(
        cls,
        chosen: AgentOptions,
        ref: TranscriptRef,
        at: str | None,
        decisions: Mapping[str, Decision] | None,
    ) -> Agent[Any]:
        from ..session import load_transcript

        if at is not None:
            truncate_at(ref, at)
        loaded = load_transcript(ref)
        check_decisions(loaded.messages, decisions or {})
        chosen = replace(chosen, session=replace(chosen.session, session_id=loaded.session_id))
        agent: Agent[Any] = cls.__new__(cls)
        agent._open(chosen, _stored_session(loaded), resumed=loaded)
        agent._decisions = dict(decisions or {})
        return agent

    async def _started(self) -> Started:
        """The started session, starting it first if it is not."""
        async with self._setup_lock:
            if isinstance(self._state, Unstarted):
                self._state = await self._state.start(self.prompt_queue)
            return self._state

    @property
    def _runtime(self) -> Runtime | None:
        """The started session's parts (None before the start): for tests."""
        return self._state.runtime

    # ---- properties ---------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The session id (the transcript's name)."""
        return self.session.session_id

    @property
    def messages(self) -> list[Message]:
        """A copy of the conversation's internal message array (`session.messages`)."""
        return list(self.session.messages)

    @property
    def usage(self) -> Usage:
        """Tokens of every billed request of this session (`session.usage`)."""
        return self.session.usage

    @property
    def cost_usd(self) -> float:
        """What this session's billed requests cost, in US dollars (`session.cost_usd`)."""
        return self.session.cost_usd

    @property
    def turns(self) -> int:
        """Turns this session ran (docs/loop.md, "Turns"; `session.turns`)."""
        return self.session.turns

    @property
    def notices(self) -> list[str]:
        """Notices for the user so far (see `CallbackOptions.on_notice`)."""
        return self._state.notices

    @property
    def tasks(self) -> TaskManager | None:
        """The session's background tasks (shells and agents), once it has started."""
        return self._state.tasks

    @property
    def mcp_status(self) -> dict[str, McpServerStatus]:
        """The session's MCP servers by name and how each is doing (connected, failed with
        its message, ...); empty until the session started or when it has none."""
        return self._state.mcp_status

    async def mcp_reconnect(self, name: str) -> McpServerStatus:
        """Close MCP server `name`'s connection (if any) and connect it afresh, the other
        servers left alone (Claude Code's `/mcp` → Reconnect). Returns its status once it is
        connected or has failed (within `MCP_TIMEOUT`). A server that joins the session now
        (it failed or was still connecting at the start) brings its tools: the next request
        sends them at the end of the tools array; one the session started with keeps its
        tools where they were. Starts the session first if it has not started.

        Raises:
            McpLoginError: the session has no MCP server `name` (the message names those it
                has).
        """
        started = await self._started()
        return await started.mcp_reconnect(name)

    async def mcp_login(self, name: str, show: Callable[[str], Awaitable[None]]) -> LoginResult:
        """Log in to the OAuth-protected MCP server `name` as `queryloop mcp login NAME`
        does, then reconnect it in this session with the new tokens (`mcp_reconnect`).
        `show(url)` presents the authorization URL (print it; nothing opens a browser) and
        is awaited on this event loop; the call returns once the browser came back to the
        loopback callback and the server answered (or the login failed: see the result's
        status), within 5 minutes. Cancelling the call stops the login and releases the
        callback port; the session is left as it was. Starts the session first if it has
        not started.

        Raises:
            McpLoginError: no MCP server `name`, a server without a login (stdio), or its
                `oauth.callbackPort` in use.
        """
        started = await self._started()
        return await started.mcp_login(name, show)

    @property
    def model(self) -> str:
        """The main model."""
        return self._state.model

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools the model is offered (known once the session started)."""
        return self._state.tool_names

    @property
    def agents(self) -> list[AgentDefinition]:
        """The subagent types the session loaded (built-in, user, project, plugin, yours),
        each with its `source` and file (empty until the session started)."""
        return self._state.agents

    @property
    def status_line(self) -> StatusLineSetting | None:
        """The settings' `statusLine` command, for a UI to run (None: none, or not started)."""
        return self._state.status_line

    @property
    def hook_transcript_path(self) -> str:
        """The transcript in Claude Code's format that hooks and the status line read
        (`transcript_path`; "" when not persisted or not started)."""
        return self._state.hook_transcript_path

    @property
    def permission_rules(self) -> RuleSet:
        """The allow, ask and deny rules in force, each with the `source` it came from (a
        settings file, the command line, or "session" for an answer given during it)."""
        return self._state.permission_rules

    @property
    def permission_mode(self) -> str:
        """The permission mode in force (the option, else the settings' defaultMode)."""
        return self._state.permission_mode

    async def set_permission_mode(self, mode: str | PermissionMode) -> None:
        """Switch the permission mode (the REPL's mode switch), also while a prompt runs:
        calls checked from now on, and subagents started from now on, use it.

        Raises:
            ConfigError: an unknown mode, or bypassPermissions where the settings disable it.
        """
        chosen = parse_mode(mode) if isinstance(mode, str) else mode
        started = await self._started()
        started.runtime.permission.context.set_mode(chosen)

    async def start(self) -> Agent[OutputT]:
        """Set up now (providers, MCP servers, session) instead of on the first prompt."""
        await self._started()
        return self

    # ---- running ------------------------------------------------------------------------

    async def run(
        self, prompt: str | None = None, *, decisions: Mapping[str, Decision] | None = None
    ) -> RunResult[OutputT]:
        """Run one prompt to its end and return the result.

        Without a prompt the run continues the conversation where it stopped: after a
        deferral (terminal `deferred`), once the decisions are given, or after a kill
        between a tool's result and the next request. `decisions` answers deferred tool
        calls, as `Agent.resume(..., decisions=...)` does (docs/approvals.md)."""
        async for _event in self.stream(prompt, decisions=decisions):
            pass
        assert self.last_result is not None
        return self.last_result

    async def stream(
        self, prompt: str | None = None, *, decisions: Mapping[str, Decision] | None = None
    ) -> AsyncIterator[LoopEvent]:
        """Run one prompt, yielding every loop event; the last is a `TerminalEvent`.

        Each event is applied to `self.session` before it is yielded, so the session is
        current whenever you look; when the stream ends, `last_result` holds the prompt's
        `RunResult` (what `run()` returns). One prompt at a time: a second call while one
        runs raises `QueryloopError` (use separate Agents, or `queryloop.batch`, for
        parallel sessions). Deferred tool calls are resolved first (`run()`)."""
        if self._running:
            raise QueryloopError(
                "this Agent is already running a prompt; await it first, or use one Agent "
                "per concurrent session"
            )
        decided = {**self._decisions, **(decisions or {})}
        check_decisions(self.session.messages, decided)
        if prompt is None and not can_continue(self.session.messages):
            raise ConfigError(
                "nothing to continue: no tool call awaits a decision and the model has "
                "answered; give a prompt"
            )
        self._decisions = {}
        self._running = True
        self.last_result = None
        recorder = RunRecorder(self.session)
        try:
            runtime = (await self._start_work()).runtime
            # The prompt's spans (queryloop.telemetry): a no-op unless the session traces.
            work = self._stream(runtime, prompt, decided)
            async for event in runtime.trace.run(work, prompt=prompt or ""):
                recorder.observe(event)
                yield event
        finally:
            self._running = False
            self._state.end_prompt()  # a skill's allowed-tools end with the prompt
            self.last_result = recorder.result()

    async def _start_work(self) -> Started:
        """The started session, with the abort of an earlier interrupted turn cleared: a prompt or a
        /compact after Ctrl-C must not inherit it."""
        started = await self._started()
        started.runtime.params.tool_context.abort.reset()
        return started

    async def _stream(
        self, runtime: Runtime, prompt: str | None, decisions: Mapping[str, Decision]
    ) -> AsyncIterator[LoopEvent]:
        self.session.begin_prompt()
        async for event in self._resolve_deferred(runtime, decisions):
            yield event
            if isinstance(event, TerminalEvent):
                return  # deferred again: nothing is sent, the prompt included
        async for resumed in self._resume_interrupted(runtime):
            yield resumed
        rest = self._query(runtime, None) if prompt is None else self._prompted(runtime, prompt)
        async for event in rest:
            yield event

    async def _resolve_deferred(
        self, runtime: Runtime, decisions: Mapping[str, Decision]
    ) -> AsyncIterator[LoopEvent]:
        """Act on the session's deferred tool calls first (`loop.deferred`)."""
        async for event in resolve_deferred(runtime.params, self.session.messages, decisions):
            self.session.apply(event)  # durable before the next step: `started` above all
            if isinstance(event, TerminalEvent):
                self.last_terminal = event
            yield event

    async def _prompted(self, runtime: Runtime, prompt: str) -> AsyncIterator[LoopEvent]:
        """The prompt (and what its hooks and attachments add), then the query loop."""
        session = self.session
        prepared = await prepare_prompt(runtime, prompt, session.messages)
        for message in prepared.messages:
            event: LoopEvent = MessageEvent(message)
            session.apply(event)
            yield event
        if prepared.blocked is not None:
            terminal = TerminalEvent(
                reason=Terminal.HOOK_STOPPED,
                turn=0,
                detail=prepared.blocked,
                messages=session.messages,
            )
            session.apply(terminal)
            self.last_terminal = terminal
            yield terminal
            return
        async for event in self._query(runtime, prepared.model):
            yield event

    async def _query(self, runtime: Runtime, model: str | None) -> AsyncIterator[LoopEvent]:
        """The query loop over the session's array, each event applied before it is yielded."""
        session = self.session
        turn, streaming = 0, False
        try:
            async for event in query(runtime.params, session.messages, model=model):
                session.apply(event)
                runtime.timing.observe(event)  # timing records for queryloop.report
                if isinstance(event, RequestStart | TransitionEvent):
                    turn = event.turn
                elif isinstance(event, TerminalEvent):
                    self.last_terminal = event
                streaming = _still_streaming(event, streaming)
                yield event
        except (asyncio.CancelledError, GeneratorExit):
            self._repair_after_cancel(turn, streaming=streaming)
            raise

    @property
    def skills(self) -> dict[str, str]:
        """The session's skills and commands: name -> description (known once the session
        started)."""
        return self._state.skills

    @property
    def slash_commands(self) -> dict[str, Skill]:
        """The skills and commands the user may type as `/name [args]` (not those marked
        `user-invocable: false`), by name; empty until the session started."""
        return self._state.slash_commands

    @property
    def home(self) -> Path:
        """$QUERYLOOP_HOME of this Agent (user memory, skills, sessions)."""
        return self._state.home

    def add_memory(self, text: str, scope: str = "project") -> Path:
        """Append a line to the project or user memory file (the REPL's `# text`); the
        running conversation is told with a meta message. Returns the file's path."""
        from ..context.memory_edit import add_memory_line, memory_note, memory_path
        from ..messages.constructors import meta_user_message

        path = add_memory_line(text, memory_path(scope, self.options.workspace.cwd, self.home))
        self.session.append(meta_user_message(memory_note(text, path)))
        return path

    def memory_files(self) -> list[MemoryFile]:
        """The memory files as they are now, of the scopes the session reads, `@path` imports
        included (followed as the session follows them once it started:
        `SessionAttachments.memory_imports`)."""
        from ..config.discovery import SettingSources
        from ..config.memory import discover_memory_files

        policy = self._state.memory_imports
        sources = SettingSources.of(self.options.workspace.setting_sources)
        trusted = policy is not None and policy.external  # the workspace's trust
        return discover_memory_files(
            self.options.workspace.cwd, user_home=self.home, policy=policy, sources=sources,
            trusted=trusted,
        )  # fmt: skip

    def nested_memory_files(self) -> list[str]:
        """Memory files of subfolders attached so far in this conversation."""
        from ..context.kinds import AttachmentType
        from ..context.scan import attachments_of

        found = attachments_of(self.session.messages, AttachmentType.NESTED_MEMORY)
        return [str(m.attachment.data.get("path")) for m in found]

    def checkpoints(self) -> list[Checkpoint]:
        """One checkpoint per prompt, oldest first: what Write/Edit/MultiEdit changed."""
        return self._state.checkpoints()

    async def rewind(self, to: int | str, mode: RewindMode | str = "both") -> RewindOutcome:
        """Go back to before prompt `to` (its number or message uuid): restore the files
        ("code"), the conversation ("conversation") or "both". Bash changes are not tracked.
        Removed messages are voided in the transcript, so a resume sees the rewind too."""
        from ..checkpoints import RewindMode, rewind, tombstones_for

        started = await self._started()
        outcome = rewind(started.runtime.checkpoints, self.session.messages, to, RewindMode(mode))
        for stone in tombstones_for(outcome.removed):
            self.session.append(stone)  # written to the transcript; drops its target
        return outcome

    def queue(self, prompt: str) -> None:
        """Queue input while `stream()` runs: it reaches the model at the next tool-result
        boundary (a `queued_command` attachment), in the same turn. If the turn ends first it
        stays queued: `take_queued()` returns it as the next prompt (docs/loop.md)."""
        self.prompt_queue.put(prompt)

    @property
    def queued(self) -> list[str]:
        """The prompts queued and not yet sent to the model, oldest first."""
        return [item.text for item in self.prompt_queue.items]

    def take_queued(self) -> str | None:
        """Empty the queue: its prompts as one prompt (to run next, or to give back after an
        interrupt), or None when nothing is queued."""
        return self.prompt_queue.take()

    async def _resume_interrupted(self, runtime: Runtime) -> AsyncIterator[LoopEvent]:
        """Before the next request: re-run the last response's interrupted read-only calls
        (after kill -9 + resume, or an abort) and record their results (`loop.resume`)."""
        from ..loop.resume import resume_interrupted_calls

        params = runtime.params
        resumed = await resume_interrupted_calls(
            self.session.messages,
            params.tools,
            params.tool_context,
            permission=params.permission,
            hooks=params.tool_hooks,
        )
        for message in resumed.appended:
            event = MessageEvent(message)
            self.session.apply(event)
            yield event

    def abort(self) -> None:
        """Stop the current turn as soon as it safely can (the REPL's Ctrl-C)."""
        self._state.abort()

    async def compact(self, instructions: str | None = None) -> CompactionEvent | None:
        """Summarise the conversation now (the CLI's /compact): the session's array becomes
        the summary and the kept tail, and the next request is built from it. The summary
        request is billed to the session. Returns the applied event (None: nothing to
        compact, or a PreCompact hook blocked it)."""
        started = await self._start_work()
        with started.runtime.trace.compaction() as record:
            result = await started.compact(self.session.messages, instructions)
            if result is None:
                record(None)
                return None
            event = compaction_event(result.messages, CompactTrigger.MANUAL, result)
            record(event)
        self.session.apply(event)
        self.session.sync()
        return event

    def context_usage(self) -> dict[str, int]:
        """Tokens by category: system, tools, memory, messages, free, window."""
        return self._state.context_usage(self.session.messages)

    def cost_breakdown(self) -> CostBreakdown:
        """What caching saved and what each compaction cost and saved (`report.costs`): from
        the session's transcript (every process that worked on it); without one, from this
        process's billed requests, with no compaction figures."""
        from ..report import read_timeline
        from ..report.costs import CostBreakdown, tally

        transcript = self.session.transcript
        if transcript is not None and transcript.ref.exists():
            return read_timeline(transcript.ref).costs
        records = self.session.records
        return CostBreakdown(*tally((r.usage, r.model, r.cost_usd) for r in records))

    def report(self, out: str | Path | None = None) -> Path:
        """Write this session's report, one self-contained HTML page built from the
        transcript (see `queryloop.report`), and return its path (default: beside the
        transcript, `<session-id>.html`)."""
        from ..report import write_report

        transcript = self.session.transcript
        if transcript is None:
            raise QueryloopError("no transcript to report on: run a prompt first (persist on)")
        return write_report(transcript.ref, out)

    def clear(self) -> None:
        """Start a fresh conversation in a new session (the CLI's /clear)."""
        self._state.clear()

    async def aclear(self) -> None:
        """`clear()` with Claude Code's hooks around it (the CLI's /clear): SessionEnd
        (reason `clear`) for the conversation that ends, then SessionStart (source `clear`)
        for the new one, whose context opens it."""
        await self._state.aclear()

    async def notification(
        self, message: str, notification_type: str, title: str | None = None
    ) -> None:
        """Run Notification hooks: something waits for the user (the REPL's permission
        question, `permission_prompt`; an idle prompt, `idle_prompt`)."""
        await self._state.notification(message, notification_type, title)

    async def aclose(self, reason: str = "other") -> None:
        """Run SessionEnd hooks (`reason`: Claude Code's, e.g. `prompt_input_exit` when the
        REPL exits), stop MCP servers and close the transcript."""
        self._state = await self._state.aclose(reason)

    async def __aenter__(self) -> Agent[OutputT]:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # ---- bookkeeping --------------------------------------------------------------------

    def _repair_after_cancel(self, turn: int, *, streaming: bool) -> None:
        """Cancelled mid-turn: answer every unanswered tool_use so the array stays valid,
        and close the prompt in the session with the loop's own rule for the reason: during
        the model's stream `aborted_streaming`, while its tool calls ran `aborted_tools`."""
        messages = self.session.messages
        uses = (b for m in messages if isinstance(m, AssistantMessage) for b in tool_uses_of(m))
        answers = answer_unanswered(uses, result_ids(messages), Interruption.CANCELLED)
        for answer in answers:
            self.session.append(answer)
        tools_ran = bool(answers) and not streaming
        reason = Terminal.ABORTED_TOOLS if tools_ran else Terminal.ABORTED_STREAMING
        self.session.end_prompt(TerminalEvent(reason, turn=turn, detail="cancelled"))


def _stored_session(loaded: LoadedSession) -> Session:
    """The conversation a stored session holds: its messages and totals, what the agent had
    seen of files (where they are unchanged, `session.files`) and the deferred tools
    ToolSearch loaded, in load order (the tools array keeps them)."""
    totals = SessionTotals(
        loaded.usage, loaded.cost_usd, loaded.requests, loaded.turns, loaded.prompts
    )
    return Session(
        loaded.session_id,
        messages=loaded.messages,
        totals=totals,
        read_files=restore_read_state(loaded.read_files),
        loaded_tools=loaded.loaded_tools,
    )


def _still_streaming(event: LoopEvent, streaming: bool) -> bool:
    """Whether the model's response is still streaming after `event` (a request started and
    its message is not complete yet)."""
    if isinstance(event, RequestStart):
        return True
    if isinstance(event, StreamDelta) and isinstance(event.event, MessageComplete):
        return False
    return streaming
