"""Build a `Runtime` from `AgentOptions`: `assemble` reads like the list of parts; each
part has a named builder (`build_*`) that makes it from the options and the parts before it.
A subagent's thread is made by the same thread builders (`thread_request_builder`,
`queryloop.agents.runner`) with the child's options."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agents.plugin_agents import plugin_agents
from ..agents.thread import OutputLimits, ThreadOptions, ToolSet, build_thread
from ..agents.tool import AgentTool
from ..agents.wiring import build_subagents, build_tasks
from ..checkpoints import CheckpointingHooks, CheckpointStore, checkpoint_folder
from ..compact import CompactConfig, CompactionPipeline
from ..compact.policy import CachePrices, policy_named
from ..compact.summarizer import provider_summarizer
from ..config.discovery import SettingSources
from ..config.memory import SessionContext, project_root
from ..config.settings import claude_protected_entries, managed_settings_path
from ..config.workspace import Workspace, load_workspace
from ..context import RequestBuilder
from ..context.cache_ttl import CacheTtlSetting
from ..context.facts import SessionFacts, derive_facts
from ..context.memory_imports import ImportPolicy
from ..context.queue import PromptQueue
from ..context.tool_search import parse_tool_search, plan_deferral
from ..errors import ConfigError
from ..hooks import HookRunner, HooksConfig
from ..loop.summaries import SUMMARY_PURPOSE, ModelSummarizer, default_summary_model
from ..permissions import PermissionChecker, PermissionContext, PermissionMode, parse_mode
from ..permissions.checker import BYPASS_DISABLED
from ..permissions.protected import ProtectedPaths, protected_paths
from ..permissions.rules import MatchContext
from ..providers.base import ModelProvider
from ..providers.factory import choose_provider, provider_for
from ..providers.models import ModelInfo, get_model_info
from ..providers.retry import DEFAULT_RETRY
from ..sandbox import Sandbox, SandboxPolicy
from ..session import (
    LoadedSession,
    RequestKind,
    Session,
    Transcript,
    queryloop_home,
    session_path,
)
from ..session.files import snapshots_of
from ..session.live import model_table_price
from ..session.timing import TimingRecorder
from ..skills.commands import skill_read_dirs, skill_tools
from ..skills.loader import SkillSet, load_skills
from ..telemetry import Telemetry, create_telemetry
from ..tools import builtin_tools
from ..tools.base import FileReadRecord, Tool, ToolContext, ToolObserver, observers
from ..tools.builtin import selected_builtin_names
from ..tools.builtin.tool_search import ToolSearchTool
from ..tools.deferred import is_mcp_tool
from .attachments import SessionAttachments
from .hook_points import PROMPT_HOOK_PURPOSE, SettingsWatch, prompt_model, with_permission_hooks
from .options import AgentOptions
from .runtime import HookedSummarizer, Notices, Runtime

if TYPE_CHECKING:
    from ..agents.host import SubagentHost
    from ..tasks import TaskManager
    from ..tools.mcp import McpManager
    from ..tools.mcp_launch import McpLaunch

DEFAULT_MODEL = "claude-sonnet-5-5"
MAIN_AGENT_NAME = "queryloop"
"""`gen_ai.agent.name` of the main thread (a subagent's is its agent type)."""
COMPACTION_MAX_TOKENS = 20_000
DEFAULT_OUTPUT_TOKENS = 8_192


@dataclass(frozen=True)
class ModelChoice:
    """The main model as the options, the environment and the settings choose it."""

    provider: ModelProvider
    """Unmetered; each use is metered into the session by its kind (main, compact, side)."""
    name: str
    """The bare model id sent to the provider (`ollama:qwen2.5` → `qwen2.5`)."""
    info: ModelInfo
    owns_provider: bool
    """We built the provider, so we close its HTTP client (a caller's stays open)."""


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
    home = queryloop_home(options.home)
    workspace = build_workspace(options, home)
    session_mode(options, workspace)  # a refused mode stops the run before anything starts
    mcp_launch = _start_mcp(workspace)  # the servers start now, while the SDK still loads
    model = build_model(options, workspace)
    transcript = build_transcript(options, home, session.session_id, resumed)
    session.attach(transcript)
    notices = Notices(options.on_notice)
    mcp = await mcp_launch.manager() if mcp_launch is not None else None
    exit_stack = build_exit_stack(mcp, model)
    plugins = workspace.plugins.plugins
    skills = load_skills(
        options.cwd, home, trusted=workspace.trusted, plugins=plugins, sources=workspace.sources
    )
    agents, agent_notices = plugin_agents(plugins)
    for notice in [
        *workspace.notices,
        *_mcp_notices(mcp),
        *map(str, skills.problems),
        *skills.notices,
        *agent_notices,
    ]:
        notices.add(notice)
    compact_config = build_compact_config(options, model, workspace)
    timing = build_timing(session, compact_config)
    session_dir = build_session_dir(transcript)
    tasks = build_tasks(session_dir)
    telemetry = build_telemetry(options, session, model, tasks)
    trace = telemetry.thread(agent_name=MAIN_AGENT_NAME, model=model.name)
    sandbox = build_sandbox(options, workspace, home, notices)
    if sandbox is not None:
        exit_stack.push_async_callback(sandbox.aclose)
    tools = build_tools(options, mcp, workspace, skills, compact_config.context_window)
    permission_context = build_permission_context(options, workspace, home, sandbox)
    hooks = build_hooks(options, workspace, session, permission_context, notices, model, telemetry)
    permission = build_permission(options, permission_context, hooks)
    session_context = build_session_context(options, workspace, home)
    for notice in session_context.memory_notices():
        notices.add(notice)
    facts, current_facts = build_facts(session_context, model, resumed)
    limits = build_output_limits(options, model.info)
    thread_options = build_thread_options(
        options, model.name, tools, facts, limits,
        cache_ttl=build_cache_ttl(options, workspace),
        last_request_at=resumed.last_request_at if resumed is not None else None,
        nested_memory=workspace.sources.project,
    )  # fmt: skip
    subagents = build_subagents(
        thread_options, session, provider=model.provider, permission=permission, hooks=hooks,
        tasks=tasks, session_dir=session_dir, cwd=options.cwd, home=home,
        trusted=workspace.trusted, agents=[*agents, *options.agents],
        max_depth=options.max_subagent_depth, notify=notices.add, telemetry=telemetry,
        sources=workspace.sources,
    )  # fmt: skip
    tool_context = build_tool_context(
        options, workspace, session_dir, skills, observers(timing, trace) or timing, tasks,
        subagents.host, sandbox, read_files=session.read_files,
        loaded_tools=session.loaded_tools,
    )  # fmt: skip
    checkpoints = build_checkpoints(tool_context)
    main = build_thread(
        thread_options,
        provider=session.metered(model.provider, RequestKind.MAIN),
        permission=permission,
        hooks=hooks,
        tool_context=tool_context,
    )
    builder = main.builder
    compactor, summarizer = build_compactor(
        compact_config, tools, model, session, builder, tool_context, hooks
    )
    exit_stack.push_async_callback(subagents.aclose)
    attachments = SessionAttachments(
        builder, compactor, tool_context, tools, skills, subagents,
        prompt_queue=prompt_queue if prompt_queue is not None else PromptQueue(), mcp=mcp,
        hooks=hooks, facts=facts, current_facts=current_facts,
        nested_memory=workspace.sources.project,
        memory_imports=session_context.policy,
    )  # fmt: skip
    params = main.query_params(
        tool_hooks=CheckpointingHooks(hooks, checkpoints),  # Write/Edit/MultiEdit snapshots
        stop_hooks=[*options.stop_hooks, hooks.as_stop_hook()],
        attachments=attachments.turn,
        max_turns=options.max_turns,
        session_id=session.session_id,
        fallback_model=options.fallback_model,
        compactor=compactor,
        token_budget=options.token_budget,
        tool_use_summarizer=build_tool_use_summarizer(options, model, session, tool_context),
        task_events=subagents.tasks.drain_events,
    )
    start_transcript(transcript, resumed, model.name, options.cwd, facts)
    return Runtime(
        options=options, home=home, model_info=model.info, params=params, builder=builder,
        compactor=compactor, summarizer=summarizer, hooks=hooks, permission=permission,
        session=session, tools=tools, attachments=attachments, subagents=subagents,
        skills=skills, checkpoints=checkpoints, notices=notices, timing=timing,
        telemetry=telemetry, trace=trace, exit_stack=exit_stack, mcp=mcp,
        settings_watch=build_settings_watch(workspace), facts=facts,
        memory=tuple(session_context.memory_files()),
    )  # fmt: skip


def build_session_context(
    options: AgentOptions, workspace: Workspace, home: Path
) -> SessionContext:
    """The session's git snapshot and memory. Memory `@path` imports follow the workspace:
    outside the project only in a trusted folder, and never a file a Read deny rule covers."""
    rules, cwd = workspace.settings.rules, options.cwd

    def denied(path: Path) -> bool:
        return rules.find("deny", "Read", str(path), MatchContext(cwd, Path.home())) is not None

    policy = ImportPolicy(project_root(cwd), external=workspace.trusted, denied=denied)
    return SessionContext(cwd, user_home=home, policy=policy, sources=workspace.sources)


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
        options.cwd,
        user_home=home,
        trust_override=options.trust,
        mcp_config_files=[options.mcp_config] if options.mcp_config else (),
        allowed_tools=options.allowed_tools,
        disallowed_tools=options.disallowed_tools,
        plugin_dirs=options.plugin_dirs,
        mcp_servers=options.mcp_servers,
        add_dirs=options.add_dirs,
        sources=SettingSources.of(options.setting_sources),
    )


def model_name(options: AgentOptions, workspace: Workspace) -> str:
    """The main model's name: the option, else `QUERYLOOP_MODEL`, the settings', the default."""
    name = options.model or os.environ.get("QUERYLOOP_MODEL") or workspace.settings.model
    return name or DEFAULT_MODEL


def build_model(options: AgentOptions, workspace: Workspace) -> ModelChoice:
    """The main model: the option, else `QUERYLOOP_MODEL`, the settings' model, the default;
    its provider (the caller's, or one built for the name) and its table entry."""
    name = model_name(options, workspace)
    if options.provider is not None:
        return ModelChoice(options.provider, name, get_model_info(name), owns_provider=False)
    choice = choose_provider(name, base_url=options.base_url)
    provider = provider_for(name, base_url=options.base_url, retry=options.retry or DEFAULT_RETRY)
    bare = choice.model or name
    return ModelChoice(provider, bare, get_model_info(bare), owns_provider=True)


def build_transcript(
    options: AgentOptions, home: Path, session_id: str, resumed: LoadedSession | None
) -> Transcript | None:
    """The transcript writer (the resumed file, else a new one); None when not persisted."""
    if not options.persist:
        return None
    # Each record is written straight to the kernel (kill -9 safe); fsync runs once per
    # prompt (Runtime.sync) instead of per message, which would cost milliseconds each.
    if resumed is not None and resumed.path:
        return resumed.open_transcript(fsync=False)  # chains on from its last message
    return Transcript(session_path(session_id, options.cwd, home), session_id, fsync=False)


def build_session_dir(transcript: Transcript | None) -> Path | None:
    """The session's folder beside its transcript (spilled tool results, task output,
    subagent transcripts, checkpoints); None when not persisted."""
    return transcript.path.parent / transcript.session_id if transcript else None


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
        options.tracer_provider,
        provider_name=model.provider.name,
        conversation_id=lambda: session.session_id,  # a new one after /clear
    )
    if telemetry.enabled:
        tasks.subscribe(telemetry.task_event)
    return telemetry


def build_tool_context(
    options: AgentOptions,
    workspace: Workspace,
    session_dir: Path | None,
    skills: SkillSet,
    observer: ToolObserver,
    tasks: TaskManager,
    subagents: SubagentHost,
    sandbox: Sandbox | None = None,
    *,
    read_files: dict[str, FileReadRecord] | None = None,
    loaded_tools: list[str] | None = None,
) -> ToolContext:
    """The main thread's tool state: the folders it may read (the session folder holds
    spilled tool results the model is told to Read back; skills' folders), the env, the
    observer of its tool calls (timing, trace), the session's background tasks, the host its
    subagents start from and the Bash sandbox. `read_files` is the session's record of the
    files the agent has seen (`Session.read_files`, restored on resume); the context shares
    that dict, and the list of loaded deferred tools (`Session.loaded_tools`) likewise."""
    seen = read_files if read_files is not None else {}
    return ToolContext(
        read_files=seen,
        loaded_deferred_tools=loaded_tools if loaded_tools is not None else [],
        file_snapshots=snapshots_of(seen),
        tasks=tasks,
        subagents=subagents,
        sandbox=sandbox,
        cwd=options.cwd,
        additional_dirs=[
            *workspace.settings.additional_directories,
            *_existing(session_dir),
            *skill_read_dirs(skills),
        ],
        session_dir=session_dir,
        env=with_plugin_path({**workspace.settings.env, **options.env}, workspace),
        observer=observer,
    )


def with_plugin_path(env: dict[str, str], workspace: Workspace) -> dict[str, str]:
    """The Bash tool's environment with the plugins' `bin/` folders first on PATH (Claude
    Code: "executables added to the Bash tool's PATH ... while the plugin is enabled")."""
    bins = [str(d) for d in workspace.plugins.bin_dirs()]
    if not bins:
        return env
    path = env.get("PATH") or os.environ.get("PATH", "")
    return {**env, "PATH": os.pathsep.join([*bins, *([path] if path else [])])}


def build_sandbox(
    options: AgentOptions, workspace: Workspace, home: Path, notices: Notices
) -> Sandbox | None:
    """The Bash sandbox of the `sandbox` settings (None when it is off). Writable besides
    the working folder: `allowWrite` and `additionalDirectories`; read-only inside them:
    `denyWrite` and the protected paths, so a sandboxed command cannot rewrite the rules
    the agent runs under. That it cannot start is said once, as a notice."""
    config = workspace.settings.sandbox
    if not config.enabled:
        return None
    protected = protected_paths(  # the same set the permission checker guards
        [options.cwd, *workspace.settings.additional_directories],
        home=Path.home(),
        config_home=home,
        managed_settings=managed_settings_path(),
        extra=claude_protected_entries(),
    )
    policy = SandboxPolicy(
        allow_write=(*config.allow_write, *workspace.settings.additional_directories),
        read_only=(*config.deny_write, *sandbox_read_only(protected)),
        deny_read=config.deny_read,
        allowed_domains=config.allowed_domains,
        denied_domains=config.denied_domains,
        excluded_commands=config.excluded_commands,
        fail_if_unavailable=config.fail_if_unavailable,
        auto_allow=config.auto_allow,
    )
    return Sandbox(policy, warn=notices.add)


def sandbox_read_only(protected: ProtectedPaths) -> list[Path]:
    """The protected paths as the sandbox mounts them read-only. A git folder is narrowed to
    its hooks and config: what runs code later is there, while commands in the sandbox still
    commit, fetch and check out (objects, refs, the index)."""
    paths: list[Path] = []
    for entry in protected.entries:
        if entry.is_dir and (entry.path.name == ".git" or (entry.path / "HEAD").is_file()):
            paths += [entry.path / "hooks", entry.path / "config"]
        else:
            paths.append(entry.path)
    return paths


def build_tools(
    options: AgentOptions,
    mcp: McpManager | None,
    workspace: Workspace,
    skills: SkillSet,
    context_window: int,
) -> ToolSet:
    """The built-in and the caller's tools, MCP tools and skill tools. MCP tools go behind
    ToolSearch only when their definitions are large (`context.tool_search`); a deferred set
    lets servers come and go without changing the tools array."""
    base: list[Tool] = [
        *builtin_tools(options.builtin_tools, provided=[AgentTool()]),
        *options.tools,
    ]
    mcp_tools: list[Tool] = list(mcp.tools()) if mcp is not None else []
    setting = options.tool_search
    policy = parse_tool_search(setting if setting is not None else workspace.settings.tool_search)
    eager, deferred = plan_deferral(
        [*base, *mcp_tools], context_window=context_window, policy=policy, deferrable=is_mcp_tool
    )
    if deferred:
        eager.append(ToolSearchTool(lambda: deferred))
    eager.extend(
        skill_tools(skills, builtin="Skill" in selected_builtin_names(options.builtin_tools))
    )
    return ToolSet(tuple(eager), tuple(deferred))


def session_mode(options: AgentOptions, workspace: Workspace) -> PermissionMode:
    """The session's permission mode: the option (`--permission-mode`), else the settings'
    defaultMode. Raises ConfigError for bypassPermissions when the settings disable it
    (`permissions.disableBypassPermissionsMode`), whichever of the two chose it."""
    settings = workspace.settings
    mode = parse_mode(options.permission_mode or settings.default_mode or "default")
    if mode is PermissionMode.BYPASS and settings.disable_bypass_mode:
        raise ConfigError(BYPASS_DISABLED)
    return mode


def build_permission_context(
    options: AgentOptions, workspace: Workspace, home: Path, sandbox: Sandbox | None = None
) -> PermissionContext:
    """The session's permission state: the mode, the settings' rules and switches, the homes
    whose files are protected paths, the caller's tools; with the sandbox's
    `autoAllowBashIfSandboxed`, a Bash command that will run sandboxed does not ask
    (`Sandbox.covers`: on, working here, not excluded). Raises ConfigError when the mode is
    bypassPermissions and the settings disable it."""
    auto = sandbox is not None and sandbox.policy.auto_allow
    settings = workspace.settings
    return PermissionContext(
        mode=session_mode(options, workspace),
        rules=settings.rules,
        developer_tools=frozenset(t.name for t in options.tools),
        config_home=home,
        managed_settings=managed_settings_path(),
        extra_protected=claude_protected_entries(),
        disable_bypass=settings.disable_bypass_mode,
        deny_instead_of_prompting=settings.deny_instead_of_prompting,
        block_writes_outside=settings.block_writes_outside,
        sandboxed_bash=sandbox.covers if auto and sandbox is not None else None,
    )


def build_permission(
    options: AgentOptions, context: PermissionContext, hooks: HookRunner
) -> PermissionChecker:
    """The session's checker; whoever it asks (the caller's approver, or nobody) is asked
    after the PermissionRequest hooks."""
    return PermissionChecker(
        context, can_use_tool=with_permission_hooks(hooks, options.can_use_tool)
    )


def build_hooks(
    options: AgentOptions,
    workspace: Workspace,
    session: Session,
    permission: PermissionContext,
    notices: Notices,
    model: ModelChoice,
    telemetry: Telemetry,
) -> HookRunner:
    """The settings' hooks and the caller's; their warnings become notices; prompt hooks ask
    the model table's fast model (else the session's) through the session's provider."""
    config = workspace.settings.hooks
    if options.hooks:  # the settings' http hook limits hold for the program's hooks too
        code = HooksConfig.of(**_as_lists(options.hooks))
        config = config.merged(workspace.settings.http_hooks.applied(code))
    provider = session.metered(model.provider, RequestKind.SIDE, purpose=PROMPT_HOOK_PURPOSE)
    fast = options.summary_model or default_summary_model(provider.name) or model.name
    return HookRunner(
        config,
        cwd=options.cwd,
        session_id=lambda: session.session_id,  # a new one after /clear
        transcript_path=lambda: session.transcript.path if session.transcript else None,
        env=workspace.settings.env,
        permission_mode=lambda: permission.mode.value,  # the REPL may switch modes
        on_warning=notices.hook_warning,
        on_status=options.on_hook_status,
        ask_model=prompt_model(provider, fast),
        observer=telemetry if telemetry.enabled else None,
    )


def build_settings_watch(workspace: Workspace) -> SettingsWatch:
    """The settings files the session read, for ConfigChange hooks."""
    return SettingsWatch([(f.path, f.scope.value) for f in workspace.settings.files])


def build_checkpoints(tool_context: ToolContext) -> CheckpointStore:
    """Per-prompt file snapshots, in the session folder (none when not persisted)."""
    folder = tool_context.session_dir
    return CheckpointStore(checkpoint_folder(folder) if folder else None)


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
) -> ThreadOptions:
    """The main thread's options (a subagent's: `agents.runner.child_options`): the
    environment and the user context are the session's facts (`build_facts`); its cache
    lifetime (`build_cache_ttl`) measures gaps from `last_request_at` (a resumed session's)."""
    return ThreadOptions(
        model=model,
        instructions=options.system_prompt,
        environment=facts.dynamic_suffix(),
        tools=tools,
        user_context=facts.user_context(),
        limits=limits,
        append=options.append_system_prompt,
        thinking=options.thinking,
        cache_ttl=cache_ttl,
        last_request_at=last_request_at,
        nested_memory=nested_memory,
    )


def build_cache_ttl(options: AgentOptions, workspace: Workspace) -> CacheTtlSetting:
    """How long prompt-cache entries live: the option, else the settings' `cacheTtl`, else
    "5m" (`context.cache_ttl`)."""
    return options.cache_ttl or workspace.settings.cache_ttl or "5m"


def build_compact_config(
    options: AgentOptions, model: ModelChoice, workspace: Workspace
) -> CompactConfig:
    """When and how the session compacts (the window: the option, else the model's; the
    policy: the option, else the settings', judged at the model's prices, with the 1-hour
    write price when the session writes 1-hour cache entries); the per-tool result limits
    come with the tools (`build_compactor`)."""
    name = options.compaction or workspace.settings.compaction or "default"
    one_hour = build_cache_ttl(options, workspace) == "1h"
    return CompactConfig(
        context_window=options.context_window or model.info.context_window,
        max_output_tokens=model.info.max_output_tokens,
        autocompact_threshold_tokens=options.autocompact_threshold,
        collapse_enabled=options.context_collapse,
        server_context_editing=model.provider.name == "anthropic",
        policy=policy_named(name, CachePrices.of(model.info, one_hour_writes=one_hour)),
    )


def build_compactor(
    config: CompactConfig,
    tools: ToolSet,
    model: ModelChoice,
    session: Session,
    builder: RequestBuilder,
    tool_context: ToolContext,
    hooks: HookRunner,
) -> tuple[CompactionPipeline, HookedSummarizer]:
    """The compaction pipeline; its summaries are requests on the session's cached prefix,
    metered as compaction, after the PreCompact hooks."""
    max_tokens = min(COMPACTION_MAX_TOKENS, model.info.max_output_tokens)

    def build(messages: Sequence[Any], instruction: str) -> Any:
        return builder.build_compaction_request(messages, instruction, max_tokens=max_tokens)

    provider = session.metered(model.provider, RequestKind.COMPACT)
    summarize = HookedSummarizer(
        provider_summarizer(provider, build, abort=tool_context.abort), hooks
    )
    config = replace(config, per_tool_max_chars={t.name: t.max_result_chars for t in tools.all})
    lifetime = builder.lifetime  # microcompact: the cache is cold after the TTL last written
    pipeline = CompactionPipeline(
        config,
        summarize=summarize,
        session_dir=tool_context.session_dir,
        cache_seconds=lifetime.seconds if lifetime is not None else None,
    )
    return pipeline, summarize


def build_output_limits(options: AgentOptions, info: ModelInfo) -> OutputLimits:
    """Like the reference: a capped default output limit (it reserves less of the window),
    escalated to the model's maximum only when a reply is actually cut off."""
    normal = min(options.max_tokens or DEFAULT_OUTPUT_TOKENS, info.max_output_tokens)
    return OutputLimits(normal=normal, ceiling=max(normal, info.max_output_tokens))


def build_tool_use_summarizer(
    options: AgentOptions, model: ModelChoice, session: Session, tool_context: ToolContext
) -> ModelSummarizer | None:
    """One-line summaries of tool batches by a small model (None: off, or no such model)."""
    if not options.tool_use_summaries:
        return None
    provider = session.metered(model.provider, RequestKind.SIDE, purpose=SUMMARY_PURPOSE)
    name = options.summary_model or default_summary_model(provider.name)
    if name is None:
        return None
    return ModelSummarizer(provider, name, abort=tool_context.abort)


def _existing(folder: Path | None) -> list[Path]:
    if folder is None:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    return [folder.resolve()]


def _start_mcp(workspace: Workspace) -> McpLaunch | None:
    """Start the configured servers in the background (`tools.mcp_launch`); the mcp SDK
    loads only when servers are configured, and then on the servers' own thread."""
    if not workspace.mcp_servers:
        return None
    from ..tools.mcp_launch import launch_mcp

    return launch_mcp(workspace.mcp_servers, cwd=workspace.cwd)


def _mcp_notices(mcp: McpManager | None) -> list[str]:
    if mcp is None:
        return []
    return [
        f"MCP server {status.name!r} is unavailable ({status.state}): {status.message}"
        for status in mcp.statuses().values()
        if status.state != "connected"
    ]


def _as_lists(hooks: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    return {event: list(items) for event, items in hooks.items()}
