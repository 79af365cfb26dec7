"""Build a `Runtime` from `AgentOptions`: `assemble` reads like the list of parts; each
part has a named builder (`build_*`) that makes it from the options and the parts before it.
The session's own parts are built here; the others by concept in `assembly_model` (the model
and what is spent on it), `assembly_guards` (permissions, sandbox, hooks) and
`assembly_tools` (tools, their context, checkpoints).
A subagent's thread is made by the same thread builders (`thread_request_builder`,
`queryloop.agents.runner`) with the child's options."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agents.plugin_agents import plugin_agents
from ..agents.thread import OutputLimits, ThreadOptions, ToolSet, build_thread
from ..agents.wiring import build_subagents, build_tasks
from ..checkpoints import CheckpointingHooks
from ..compact import CompactConfig
from ..config.discovery import SettingSources
from ..config.memory import SessionContext, project_root
from ..config.session_store import open_store
from ..config.workspace import Workspace, load_workspace
from ..context.cache_ttl import CacheTtlSetting
from ..context.facts import SessionFacts, derive_facts
from ..context.memory_imports import ImportPolicy
from ..context.queue import PromptQueue
from ..context.user_context import PathRule
from ..permissions import ReadDenials
from ..permissions.rules import MatchContext
from ..session import (
    LoadedSession,
    RequestKind,
    Session,
    Transcript,
    queryloop_home,
)
from ..session.live import model_table_price
from ..session.store import project_key
from ..session.store_api import SessionStore
from ..session.stores import TranscriptRef, close_store, session_folder
from ..session.timing import TimingRecorder
from ..skills.loader import load_skills
from ..telemetry import Telemetry, create_telemetry
from ..tools.base import observers
from .assembly_guards import (
    build_exec_guard,
    build_hooks,
    build_permission,
    build_permission_context,
    build_sandbox,
    build_settings_watch,
    session_mode,
)
from .assembly_model import (
    ModelChoice,
    build_cache_ttl,
    build_compact_config,
    build_compactor,
    build_model,
    build_output_limits,
    build_thinking,
    build_tool_use_summarizer,
    build_web_models,
    has_web_search,
)
from .assembly_tools import (
    build_checkpoints,
    build_output_tool,
    build_tool_context,
    build_tools,
    web_search_notices,
    with_tool,
)
from .attachments import SessionAttachments
from .mcp_late import McpTimeouts, SessionMcp, gave_up
from .options import AgentOptions
from .runtime import Notices, Runtime

if TYPE_CHECKING:
    from ..tasks import TaskManager
    from ..tools.mcp import McpManager
    from ..tools.mcp_launch import McpLaunch

MAIN_AGENT_NAME = "queryloop"
"""`gen_ai.agent.name` of the main thread (a subagent's is its agent type)."""


async def assemble(
    options: AgentOptions,
    session: Session,
    *,
    prompt_queue: PromptQueue | None = None,
    resumed: LoadedSession | None = None,
) -> Runtime:
    """Everything one session needs, each part built once by its builder from the options
    and the parts before it, around `session` (which gets its transcript here; every
    provider call is metered into it). The result is frozen."""
    home = queryloop_home(options.session.home)
    workspace = build_workspace(options, home)
    session_mode(options, workspace)  # a refused mode stops the run before anything starts
    mcp_timeouts = McpTimeouts.of({**os.environ, **workspace.settings.env})
    mcp_launch = _start_mcp(options, workspace, mcp_timeouts)  # now, while the SDK loads
    model = build_model(options, workspace)
    store, owns_store = build_session_store(options, workspace, home, resumed)
    transcript = build_transcript(options, store, session.session_id, resumed)
    session.attach(transcript)
    notices = Notices(options.callbacks.on_notice)
    mcp = await mcp_launch.manager() if mcp_launch is not None else None
    session_mcp = SessionMcp(mcp)  # the tools now; the servers still connecting join later
    exit_stack = build_exit_stack(mcp, model)
    if store is not None and owns_store:
        exit_stack.callback(close_store, store)
    plugins = workspace.plugins.plugins
    skills = load_skills(
        options.workspace.cwd,
        home,
        trusted=workspace.trusted,
        plugins=plugins,
        sources=workspace.sources,
        shell_disabled=workspace.settings.disable_skill_shell,
    )
    agents, agent_notices = plugin_agents(plugins)
    for notice in [
        *workspace.notices,
        *(gave_up(mcp) if mcp is not None else ()),
        *([mcp_timeouts.problem] if mcp is not None and mcp_timeouts.problem else []),
        *map(str, skills.problems),
        *skills.notices,
        *agent_notices,
    ]:
        notices.add(notice)
    compact_config = build_compact_config(options, model, workspace)
    timing = build_timing(session, compact_config)
    session_dir = build_session_dir(transcript, home)
    tasks = build_tasks(session_dir)
    telemetry = build_telemetry(options, session, model, tasks)
    trace = telemetry.thread(agent_name=MAIN_AGENT_NAME, model=model.name)
    sandbox = build_sandbox(options, workspace, home, notices)
    if sandbox is not None:
        exit_stack.push_async_callback(sandbox.aclose)
    shared = build_tools(
        options,
        session_mcp,
        workspace,
        skills,
        compact_config.context_window,
        session_id=lambda: session.session_id,  # a new one after /clear
        web_search=has_web_search(model),
    )
    output_tool = build_output_tool(options)
    tools = with_tool(shared, output_tool)  # the main thread's; subagents get `shared`
    permission_context = build_permission_context(options, workspace, home, sandbox)
    for notice in web_search_notices(permission_context.rules, offered=has_web_search(model)):
        notices.add(notice)
    hooks = build_hooks(options, workspace, session, permission_context, notices, model, telemetry)
    permission = build_permission(options, permission_context, hooks)
    session_context = build_session_context(options, workspace, home)
    for notice in session_context.memory_notices():
        notices.add(notice)
    facts, current_facts = build_facts(session_context, model, resumed)
    thinking = build_thinking(options, workspace, build_output_limits(options, model.info))
    if thinking.notice:
        notices.add(thinking.notice)
    thread_options = build_thread_options(
        options, model.name, tools, facts, thinking.limits, thinking=thinking.thinking,
        cache_ttl=build_cache_ttl(options, workspace),
        last_request_at=resumed.last_request_at if resumed is not None else None,
        nested_memory=workspace.sources.project,
        path_rules=session_context.path_rules(),
    )  # fmt: skip
    subagents = build_subagents(
        replace(thread_options, tools=shared), session, provider=model.provider,
        permission=permission, hooks=hooks,
        tasks=tasks, transcript=transcript.ref if transcript else None,
        cwd=options.workspace.cwd, home=home,
        trusted=workspace.trusted, agents=[*agents, *options.subagents.agents],
        max_depth=options.subagents.max_subagent_depth, notify=notices.add, telemetry=telemetry,
        sources=workspace.sources,
    )  # fmt: skip
    tool_context = build_tool_context(
        options, workspace, session_dir, skills, observers(timing, trace) or timing, tasks,
        subagents.host, sandbox, read_files=session.read_files,
        loaded_tools=session.loaded_tools,
        exec_guard=build_exec_guard(permission_context, notices),
        hidden_paths=ReadDenials(permission_context),
        web=build_web_models(options, model, session, telemetry),
    )  # fmt: skip
    checkpoints = build_checkpoints(tool_context)
    if session_mcp.pending:
        joining = asyncio.create_task(session_mcp.watch(tool_context, notices.add), name="mcp-join")
        exit_stack.callback(joining.cancel)
    main = build_thread(
        thread_options,
        provider=session.metered(model.provider, RequestKind.MAIN),
        permission=permission,
        hooks=hooks,
        tool_context=tool_context,
    )
    builder = main.builder
    compactor, summarizer = build_compactor(
        compact_config, tools, model, session, builder, tool_context, hooks, telemetry
    )
    exit_stack.push_async_callback(subagents.aclose)
    attachments = SessionAttachments(
        builder, compactor, tool_context, tools, skills, subagents,
        prompt_queue=prompt_queue if prompt_queue is not None else PromptQueue(), mcp=mcp,
        hooks=hooks, facts=facts, current_facts=current_facts,
        nested_memory=workspace.sources.project,
        memory_imports=session_context.policy, path_rules=thread_options.path_rules,
    )  # fmt: skip
    params = main.query_params(
        tool_hooks=CheckpointingHooks(hooks, checkpoints),  # Write/Edit/MultiEdit snapshots
        stop_hooks=[*options.callbacks.stop_hooks, hooks.as_stop_hook()],
        attachments=attachments.turn,
        max_turns=options.limits.max_turns,
        session_id=session.session_id,
        fallback_model=options.model.fallback_model,
        compactor=compactor,
        token_budget=options.limits.token_budget,
        tool_use_summarizer=build_tool_use_summarizer(
            options, model, session, tool_context, telemetry
        ),
        task_events=subagents.tasks.drain_events,
        output_tool=output_tool,
    )
    start_transcript(transcript, resumed, model.name, options.workspace.cwd, facts)
    return Runtime(
        options=options, home=home, model_info=model.info, params=params, builder=builder,
        compactor=compactor, summarizer=summarizer, hooks=hooks, permission=permission,
        session=session, tools=tools, attachments=attachments, subagents=subagents,
        skills=skills, checkpoints=checkpoints, notices=notices, timing=timing,
        telemetry=telemetry, trace=trace, exit_stack=exit_stack, mcp=session_mcp,
        settings_watch=build_settings_watch(workspace), facts=facts,
        memory=tuple(session_context.memory_files()),
        status_line=workspace.settings.status_line,
    )  # fmt: skip


def build_session_context(
    options: AgentOptions, workspace: Workspace, home: Path
) -> SessionContext:
    """The session's git snapshot and memory. Memory `@path` imports follow the workspace:
    outside the project only in a trusted folder, and never a file a Read deny rule covers."""
    rules, cwd = workspace.settings.rules, options.workspace.cwd

    def denied(path: Path) -> bool:
        return rules.find("deny", "Read", str(path), MatchContext(cwd, Path.home())) is not None

    policy = ImportPolicy(project_root(cwd), external=workspace.trusted, denied=denied)
    return SessionContext(
        cwd, user_home=home, policy=policy, sources=workspace.sources, trusted=workspace.trusted
    )


def build_exit_stack(mcp: McpManager | None, model: ModelChoice) -> AsyncExitStack:
    """What the session stops when it closes: its MCP servers and, when we built it, the
    provider's HTTP client (a caller's provider stays open)."""
    stack = AsyncExitStack()
    if mcp is not None:
        stack.push_async_callback(mcp.close)
    close = getattr(model.provider, "aclose", None) if model.owns_provider else None
    if close is not None:
        stack.push_async_callback(close)
    return stack


def start_transcript(
    transcript: Transcript | None,
    resumed: LoadedSession | None,
    model: str,
    cwd: Path,
    facts: SessionFacts,
) -> None:
    """A new transcript gets its header, with the facts its prefix is built from; a resumed
    one has a header, and gets the facts when it was written before they were kept (the
    ones derived now are what its requests are built from from now on)."""
    if transcript is None:
        return
    if resumed is None:
        transcript.start(model=model, cwd=str(cwd), context=facts.to_dict())
    elif stored_facts(resumed) is None:
        transcript.append_meta(context=facts.to_dict())


def build_facts(
    context: SessionContext, model: ModelChoice, resumed: LoadedSession | None
) -> tuple[SessionFacts, SessionFacts]:
    """(the facts the session's prefix is built from, the same facts as they are now): a
    new session's are today's; a resumed one keeps those its transcript recorded (derived
    from its messages when it was written before they were kept), and the difference is
    told by fact deltas (`context.facts`)."""
    now = context.facts(model.name)
    if resumed is None:
        return now, now
    return stored_facts(resumed) or derive_facts(resumed.messages, now), now


def stored_facts(resumed: LoadedSession) -> SessionFacts | None:
    """The facts a transcript recorded (its `context` meta field), if any."""
    return SessionFacts.from_dict(resumed.metadata.get("context"))


def build_workspace(options: AgentOptions, home: Path) -> Workspace:
    """The folder's settings, trust and MCP servers (with the options' rules, MCP servers
    and folders)."""
    return load_workspace(
        options.workspace.cwd,
        user_home=home,
        trust_override=options.workspace.trust,
        mcp_config_files=[options.tools.mcp_config] if options.tools.mcp_config else (),
        allowed_tools=options.permissions.allowed_tools,
        disallowed_tools=options.permissions.disallowed_tools,
        plugin_dirs=options.workspace.plugin_dirs,
        mcp_servers=options.tools.mcp_servers,
        add_dirs=options.workspace.add_dirs,
        sources=SettingSources.of(options.workspace.setting_sources),
    )


def build_session_store(
    options: AgentOptions, workspace: Workspace, home: Path, resumed: LoadedSession | None
) -> tuple[SessionStore | None, bool]:
    """The session store (None when not persisted) and whether the session opened it (and
    so closes it): a resumed session's own, else the option's, the environment's, the
    settings' or the JSONL files (`config.session_store`)."""
    if not options.session.persist:
        return None, False
    choice = options.session.session_store
    opened_here = choice is None or isinstance(choice, str)
    if resumed is not None and resumed.ref is not None:
        return resumed.ref.store, opened_here
    return open_store(choice, workspace.settings.session_store, home)


def build_transcript(
    options: AgentOptions,
    store: SessionStore | None,
    session_id: str,
    resumed: LoadedSession | None,
) -> Transcript | None:
    """The transcript writer (the resumed one, else a new one); None when not persisted.

    With the JSONL files each record is written straight to the kernel (kill -9 safe) and
    fsynced once per prompt (Runtime.sync) instead of per message, which would cost
    milliseconds each; SQLite commits each record (docs/sessions.md, "Durability")."""
    if store is None:
        return None
    if resumed is not None and resumed.ref is not None:
        return resumed.open_transcript()  # chains on from its last message
    project = project_key(options.workspace.cwd)
    return Transcript(TranscriptRef.of(store, project, session_id), session_id)


def build_session_dir(transcript: Transcript | None, home: Path) -> Path | None:
    """The session's folder (spilled tool results, task output, checkpoints), on this
    machine whatever the store (`session_folder`); None when not persisted."""
    if transcript is None:
        return None
    return session_folder(transcript.ref.main(), home)


def build_timing(session: Session, config: CompactConfig) -> TimingRecorder:
    """Timing records for the session report, written to the session's transcript."""

    def append(record: Mapping[str, Any]) -> None:
        transcript = session.transcript  # a new one after /clear
        if transcript is not None:
            transcript.append_record(record)

    limits = (config.context_window, config.thresholds().autocompact)
    return TimingRecorder(
        append,
        session_id=lambda: session.session_id,
        cost=model_table_price,
        limits=lambda: limits,
    )


def build_telemetry(
    options: AgentOptions, session: Session, model: ModelChoice, tasks: TaskManager
) -> Telemetry:
    """The session's traces (`queryloop.telemetry`): on `tracer_provider`, else on the
    provider registered with OpenTelemetry, else none. It hears the background tasks."""
    telemetry = create_telemetry(
        options.callbacks.tracer_provider,
        provider_name=model.provider.name,
        conversation_id=lambda: session.session_id,  # a new one after /clear
    )
    if telemetry.enabled:
        tasks.subscribe(telemetry.task_event)
    return telemetry


def build_thread_options(
    options: AgentOptions,
    model: str,
    tools: ToolSet,
    facts: SessionFacts,
    limits: OutputLimits,
    *,
    cache_ttl: CacheTtlSetting = "5m",
    last_request_at: float | None = None,
    nested_memory: bool = True,
    path_rules: tuple[PathRule, ...] = (),
    thinking: Mapping[str, Any] | None = None,
) -> ThreadOptions:
    """The main thread's options (a subagent's: `agents.runner.child_options`): the
    environment and the user context are the session's facts (`build_facts`); its cache
    lifetime (`build_cache_ttl`) measures gaps from `last_request_at` (a resumed session's);
    `thinking` is `build_thinking`'s choice."""
    return ThreadOptions(
        model=model,
        instructions=options.model.system_prompt,
        environment=facts.dynamic_suffix(),
        tools=tools,
        user_context=facts.user_context(),
        limits=limits,
        append=options.model.append_system_prompt,
        thinking=thinking,
        cache_ttl=cache_ttl,
        last_request_at=last_request_at,
        nested_memory=nested_memory,
        path_rules=path_rules,
    )


def _start_mcp(
    options: AgentOptions, workspace: Workspace, timeouts: McpTimeouts
) -> McpLaunch | None:
    """Start the configured servers in the background (`tools.mcp_launch`); the mcp SDK
    loads only when servers are configured, and then on the servers' own thread. Each may
    take `MCP_TIMEOUT` to connect (`mcp_late`)."""
    if not workspace.mcp_servers:
        return None
    from ..tools.mcp_launch import launch_mcp

    return launch_mcp(
        workspace.mcp_servers,
        cwd=workspace.cwd,
        connect_timeout=timeouts.connect_s,
        call_timeout=timeouts.call_s,
        wait=options.tools.mcp_wait,
    )
