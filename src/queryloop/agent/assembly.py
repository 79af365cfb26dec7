"""Build a `Runtime` from `AgentOptions`: one small function per part."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agents.wiring import install_subagents
from ..checkpoints import CheckpointingHooks, CheckpointStore, checkpoint_folder
from ..compact import CompactConfig, CompactionPipeline
from ..compact.summarizer import provider_summarizer
from ..context import RequestBuilder, build_system_prompt
from ..context.deferred import is_mcp_tool
from ..context.system_context import SessionContext
from ..context.system_prompt import build_dynamic_suffix
from ..context.tool_search import parse_tool_search, plan_deferral
from ..hooks import HookRunner, HooksConfig
from ..loop.deps import QueryParams
from ..loop.summaries import SUMMARY_PURPOSE, ModelSummarizer, default_summary_model
from ..permissions import PermissionChecker, PermissionContext, parse_mode
from ..permissions.trust import Workspace, load_workspace
from ..providers.base import ModelProvider
from ..providers.factory import choose_provider, provider_for
from ..providers.models import ModelInfo, get_model_info
from ..providers.retry import DEFAULT_RETRY
from ..session import (
    LoadedSession,
    RequestKind,
    Session,
    Transcript,
    queryloop_home,
    session_path,
)
from ..skills.commands import skill_read_dirs, skill_tools
from ..skills.loader import load_skills
from ..tools import builtin_tools
from ..tools.base import Tool, ToolContext
from ..tools.builtin import selected_builtin_names
from ..tools.builtin.tool_search import ToolSearchTool
from .options import AgentOptions
from .runtime import HookedSummarizer, Runtime

if TYPE_CHECKING:
    from ..tools.mcp import McpManager

DEFAULT_MODEL = "claude-sonnet-5-5"
COMPACTION_MAX_TOKENS = 20_000
DEFAULT_OUTPUT_TOKENS = 8_192


async def assemble(
    options: AgentOptions, session: Session, *, resumed: LoadedSession | None = None
) -> Runtime:
    """Everything one session needs, wired together around `session` (which gets its
    transcript here; every provider call is metered into it)."""
    home = queryloop_home(options.home)
    workspace = _workspace(options, home)
    model_name = options.model or os.environ.get("QUERYLOOP_MODEL") or workspace.settings.model
    model_name = model_name or DEFAULT_MODEL
    unmetered, model = _provider(options, model_name)
    provider = session.metered(unmetered, RequestKind.MAIN)
    info = get_model_info(model)
    session_id = session.session_id
    transcript = _transcript(options, home, session_id, resumed)
    session.attach(transcript)
    session_dir = transcript.path.parent / session_id if transcript else None
    tool_context = ToolContext(
        cwd=options.cwd,
        # The session folder holds spilled tool results the model is told to Read back.
        additional_dirs=[*workspace.settings.additional_directories, *_existing(session_dir)],
        session_dir=session_dir,
        env={**workspace.settings.env, **options.env},
    )
    mcp = await _start_mcp(workspace)
    eager, deferred = _tools(options, mcp, workspace, options.context_window or info.context_window)
    skills = load_skills(options.cwd, home, trusted=workspace.trusted)
    eager.extend(
        skill_tools(skills, builtin="Skill" in selected_builtin_names(options.builtin_tools))
    )
    tool_context.additional_dirs.extend(skill_read_dirs(skills))
    permission = _permission(options, workspace)
    hooks = _hooks(options, workspace, session_id, transcript, permission)
    checkpoints = CheckpointStore(checkpoint_folder(session_dir) if session_dir else None)
    session_context = SessionContext(options.cwd, user_home=home)
    builder = _request_builder(options, model, eager, deferred, session_context, tool_context)
    compactor, summarizer = _compactor(
        options,
        [*eager, *deferred],
        info,
        session.metered(unmetered, RequestKind.COMPACT),
        builder,
        tool_context,
        hooks,
    )
    # Like the reference: a capped default output limit (it reserves less of the window),
    # escalated to the model's maximum only when a reply is actually cut off.
    max_tokens = min(options.max_tokens or DEFAULT_OUTPUT_TOKENS, info.max_output_tokens)
    params = QueryParams(
        provider=provider,
        model=model,
        request_builder=builder,
        tool_context=tool_context,
        tools=[*eager, *deferred],
        max_output_tokens=max_tokens,
        max_output_tokens_ceiling=max(max_tokens, info.max_output_tokens),
        fallback_model=options.fallback_model,
        permission=permission,
        tool_hooks=CheckpointingHooks(hooks, checkpoints),  # Write/Edit/MultiEdit snapshots
        stop_hooks=[*options.stop_hooks, hooks.as_stop_hook()],
        compactor=compactor,
        max_turns=options.max_turns,
        token_budget=options.token_budget,
        session_id=session_id,
        tool_use_summarizer=_summarizer(
            options,
            session.metered(unmetered, RequestKind.SIDE, purpose=SUMMARY_PURPOSE),
            tool_context,
        ),
    )
    runtime = Runtime(
        options=options,
        session_id=session_id,
        home=home,
        params=params,
        model_info=info,
        builder=builder,
        compactor=compactor,
        summarizer=summarizer,
        hooks=hooks,
        session=session,
        mcp=mcp,
        deferred_tools=deferred,
        user_context_text="\n".join(session_context.user_context().values()),
        skills=skills,
        checkpoints=checkpoints,
        permission=permission,
    )
    for notice in [*workspace.notices, *_mcp_notices(mcp), *map(str, skills.problems)]:
        runtime.notify(notice)
    hooks.on_warning = lambda warning: runtime.notify(f"hook warning: {warning}")
    if mcp is not None:
        runtime.exit_stack.push_async_callback(mcp.close)
    if options.provider is None:
        # We built the provider, so we close its HTTP client; a caller's stays open.
        close = getattr(unmetered, "aclose", None)
        if close is not None:
            runtime.exit_stack.push_async_callback(close)
    params_with_attachments = QueryParams(
        **{**params.__dict__, "attachments": runtime.turn_attachments}
    )
    runtime.params = params_with_attachments
    install_subagents(
        runtime,
        trusted=workspace.trusted,
        agents=options.agents,
        max_depth=options.max_subagent_depth,
    )
    if resumed is not None:
        if transcript is not None:
            transcript.last_uuid = resumed.last_uuid
    elif transcript is not None:
        transcript.start(model=model, cwd=str(options.cwd))
    return runtime


def _summarizer(
    options: AgentOptions, provider: ModelProvider, tool_context: ToolContext
) -> ModelSummarizer | None:
    if not options.tool_use_summaries:
        return None
    name = options.summary_model or default_summary_model(provider.name)
    if name is None:
        return None
    return ModelSummarizer(provider, name, abort=tool_context.abort)


def _existing(folder: Path | None) -> list[Path]:
    if folder is None:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    return [folder.resolve()]


def _workspace(options: AgentOptions, home: Path) -> Workspace:
    return load_workspace(
        options.cwd,
        user_home=home,
        trust_override=options.trust,
        mcp_config_files=[options.mcp_config] if options.mcp_config else (),
        allowed_tools=options.allowed_tools,
        disallowed_tools=options.disallowed_tools,
    )


def _provider(options: AgentOptions, model_name: str) -> tuple[ModelProvider, str]:
    """The provider and the bare model id to send (`ollama:qwen2.5` → `qwen2.5`)."""
    if options.provider is not None:
        return options.provider, model_name
    choice = choose_provider(model_name, base_url=options.base_url)
    provider = provider_for(
        model_name, base_url=options.base_url, retry=options.retry or DEFAULT_RETRY
    )
    return provider, choice.model or model_name


def _transcript(
    options: AgentOptions, home: Path, session_id: str, resumed: LoadedSession | None
) -> Transcript | None:
    if not options.persist:
        return None
    path = resumed.path if resumed is not None and resumed.path else None
    path = path or session_path(session_id, options.cwd, home)
    # Each record is written straight to the kernel (kill -9 safe); fsync runs once per
    # prompt (Runtime.sync) instead of per message, which would cost milliseconds each.
    return Transcript(path, session_id, fsync=False)


async def _start_mcp(workspace: Workspace) -> McpManager | None:
    if not workspace.mcp_servers:
        return None
    from ..tools.mcp import McpManager  # the mcp SDK loads only when servers are configured

    manager = McpManager(workspace.mcp_servers, cwd=workspace.cwd)
    await manager.start()
    return manager


def _mcp_notices(mcp: McpManager | None) -> list[str]:
    if mcp is None:
        return []
    return [
        f"MCP server {status.name!r} is unavailable ({status.state}): {status.message}"
        for status in mcp.statuses().values()
        if status.state != "connected"
    ]


def _tools(
    options: AgentOptions, mcp: McpManager | None, workspace: Workspace, context_window: int
) -> tuple[list[Tool], list[Tool]]:
    """(eager, deferred). MCP tools go behind ToolSearch only when their definitions are large
    (`context.tool_search`); a deferred set lets servers come and go without changing the
    tools array."""
    base: list[Tool] = [*builtin_tools(options.builtin_tools), *options.tools]
    mcp_tools: list[Tool] = list(mcp.tools()) if mcp is not None else []
    setting = options.tool_search
    policy = parse_tool_search(setting if setting is not None else workspace.settings.tool_search)
    eager, deferred = plan_deferral(
        [*base, *mcp_tools], context_window=context_window, policy=policy, deferrable=is_mcp_tool
    )
    if deferred:
        eager.append(ToolSearchTool(lambda: deferred))
    return eager, deferred


def _permission(options: AgentOptions, workspace: Workspace) -> PermissionChecker:
    settings = workspace.settings
    mode = parse_mode(options.permission_mode or settings.default_mode or "default")
    context = PermissionContext(
        mode=mode,
        rules=settings.rules,
        developer_tools=frozenset(t.name for t in options.tools),
    )
    return PermissionChecker(context, can_use_tool=options.can_use_tool)


def _hooks(
    options: AgentOptions,
    workspace: Workspace,
    session_id: str,
    transcript: Transcript | None,
    permission: PermissionChecker,
) -> HookRunner:
    config = workspace.settings.hooks
    if options.hooks:
        config = config.merged(HooksConfig.of(**_as_lists(options.hooks)))
    return HookRunner(
        config,
        cwd=options.cwd,
        session_id=session_id,
        transcript_path=transcript.path if transcript else None,
        env=workspace.settings.env,
        permission_mode=permission.context.mode.value,
    )


def _as_lists(hooks: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    return {event: list(items) for event, items in hooks.items()}


def _request_builder(
    options: AgentOptions,
    model: str,
    eager: Sequence[Tool],
    deferred: Sequence[Tool],
    session_context: SessionContext,
    tool_context: ToolContext,
) -> RequestBuilder:
    git = session_context.system_context()
    dynamic = build_dynamic_suffix(
        cwd=options.cwd,
        model=model,
        extra_sections=[f"{key}: {value}" for key, value in git.items() if value],
    )
    system = build_system_prompt(
        attribution=None,
        static_prefix=options.system_prompt,
        dynamic_suffix=dynamic,
        append=options.append_system_prompt,
    )
    return RequestBuilder(
        model=model,
        system=system,
        tools=eager,
        user_context=session_context.user_context(),
        thinking=options.thinking,
        deferred_tools=lambda: deferred,
        tool_context=tool_context,
    )


def _compactor(
    options: AgentOptions,
    tools: Sequence[Tool],
    info: ModelInfo,
    provider: ModelProvider,
    builder: RequestBuilder,
    tool_context: ToolContext,
    hooks: HookRunner,
) -> tuple[CompactionPipeline, HookedSummarizer]:
    def build(messages: Sequence[Any], instruction: str) -> Any:
        return builder.build_compaction_request(
            messages, instruction, max_tokens=min(COMPACTION_MAX_TOKENS, info.max_output_tokens)
        )

    config = CompactConfig(
        context_window=options.context_window or info.context_window,
        max_output_tokens=info.max_output_tokens,
        autocompact_threshold_tokens=options.autocompact_threshold,
        collapse_enabled=options.context_collapse,
        per_tool_max_chars={t.name: t.max_result_chars for t in tools},
        server_context_editing=provider.name == "anthropic",
    )
    summarize = HookedSummarizer(
        provider_summarizer(provider, build, abort=tool_context.abort), hooks
    )
    return CompactionPipeline(
        config, summarize=summarize, session_dir=tool_context.session_dir
    ), summarize
