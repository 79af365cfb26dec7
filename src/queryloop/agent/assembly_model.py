"""The main model and what is spent on it, for `assembly.assemble`: the provider, the
output limits, the compaction settings and pipeline, the prompt-cache lifetime and the
one-line tool-use summaries, and the models the web tools ask."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..agents.thread import OutputLimits, ToolSet
from ..compact import CompactConfig, CompactionPipeline
from ..compact.policy import CachePrices, policy_named
from ..compact.summarizer import provider_summarizer
from ..config.workspace import Workspace
from ..context import RequestBuilder
from ..context.cache_ttl import CacheTtlSetting
from ..hooks import HookRunner
from ..loop.summaries import SUMMARY_PURPOSE, ModelSummarizer, default_summary_model
from ..providers.base import ModelProvider
from ..providers.factory import choose_provider, provider_for
from ..providers.models import ModelInfo, get_model_info
from ..providers.retry import DEFAULT_RETRY
from ..session import RequestKind, Session
from ..telemetry import Telemetry
from ..tools.base import ToolContext
from ..tools.builtin.web_fetch import PURPOSE as FETCH_PURPOSE
from ..tools.builtin.web_search import PURPOSE as SEARCH_PURPOSE
from ..tools.services import SideModel, WebModels
from .options import AgentOptions
from .runtime import HookedSummarizer

DEFAULT_MODEL = "claude-sonnet-5-5"
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


def model_name(options: AgentOptions, workspace: Workspace) -> str:
    """The main model's name: the option, else `QUERYLOOP_MODEL`, the settings', the default."""
    name = options.model.model or os.environ.get("QUERYLOOP_MODEL") or workspace.settings.model
    return name or DEFAULT_MODEL


def build_model(options: AgentOptions, workspace: Workspace) -> ModelChoice:
    """The main model: the option, else `QUERYLOOP_MODEL`, the settings' model, the default;
    its provider (the caller's, or one built for the name) and its table entry."""
    name = model_name(options, workspace)
    if options.model.provider is not None:
        return ModelChoice(options.model.provider, name, get_model_info(name), owns_provider=False)
    choice = choose_provider(name, base_url=options.model.base_url)
    provider = provider_for(
        name, base_url=options.model.base_url, retry=options.model.retry or DEFAULT_RETRY
    )
    bare = choice.model or name
    return ModelChoice(provider, bare, get_model_info(bare), owns_provider=True)


def build_output_limits(options: AgentOptions, info: ModelInfo) -> OutputLimits:
    """Like the reference: a capped default output limit (it reserves less of the window),
    escalated to the model's maximum only when a reply is actually cut off."""
    normal = min(options.model.max_tokens or DEFAULT_OUTPUT_TOKENS, info.max_output_tokens)
    return OutputLimits(normal=normal, ceiling=max(normal, info.max_output_tokens))


MAX_THINKING_VAR = "MAX_THINKING_TOKENS"
MIN_THINKING_BUDGET = 1_024
"""The Messages API's smallest `budget_tokens`."""


@dataclass(frozen=True)
class ThinkingChoice:
    """Extended thinking for the session's requests, the output limits that hold its budget,
    and what was wrong with the variable (a notice)."""

    thinking: Mapping[str, Any] | None
    limits: OutputLimits
    notice: str = ""


def build_thinking(
    options: AgentOptions, workspace: Workspace, limits: OutputLimits
) -> ThinkingChoice:
    """Thinking: the option, else Claude Code's `MAX_THINKING_TOKENS` (the environment, or
    the settings' `env`, which wins as it does in Claude Code): a budget turns thinking on
    with that many tokens, 0 turns it off; else the model's default (None). The output limit
    is raised to hold the budget and a reply (the API wants budget_tokens < max_tokens)."""
    if options.model.thinking is not None:
        return ThinkingChoice(options.model.thinking, limits)
    raw = {**os.environ, **workspace.settings.env}.get(MAX_THINKING_VAR, "").strip()
    if not raw:
        return ThinkingChoice(None, limits)
    if not raw.isdigit():
        said = f"{MAX_THINKING_VAR}={raw!r} is not a number of tokens, so it was not used"
        return ThinkingChoice(None, limits, said)
    if int(raw) == 0:
        return ThinkingChoice({"type": "disabled"}, limits)
    budget = min(max(int(raw), MIN_THINKING_BUDGET), limits.ceiling - 1)
    normal = max(limits.normal, min(budget + DEFAULT_OUTPUT_TOKENS, limits.ceiling))
    enabled = {"type": "enabled", "budget_tokens": budget}
    return ThinkingChoice(enabled, replace(limits, normal=normal))


def build_cache_ttl(options: AgentOptions, workspace: Workspace) -> CacheTtlSetting:
    """How long prompt-cache entries live: the option, else the settings' `cacheTtl`, else
    "5m" (`context.cache_ttl`)."""
    return options.context.cache_ttl or workspace.settings.cache_ttl or "5m"


def build_compact_config(
    options: AgentOptions, model: ModelChoice, workspace: Workspace
) -> CompactConfig:
    """When and how the session compacts (the window: the option, else the model's; the
    policy: the option, else the settings', judged at the model's prices, with the 1-hour
    write price when the session writes 1-hour cache entries); the per-tool result limits
    come with the tools (`build_compactor`)."""
    name = options.context.compaction or workspace.settings.compaction or "default"
    one_hour = build_cache_ttl(options, workspace) == "1h"
    return CompactConfig(
        context_window=options.context.context_window or model.info.context_window,
        max_output_tokens=model.info.max_output_tokens,
        autocompact_threshold_tokens=options.context.autocompact_threshold,
        collapse_enabled=options.context.context_collapse,
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
    telemetry: Telemetry,
) -> tuple[CompactionPipeline, HookedSummarizer]:
    """The compaction pipeline; its summaries are requests on the session's cached prefix,
    metered as compaction and traced, after the PreCompact hooks."""
    max_tokens = min(COMPACTION_MAX_TOKENS, model.info.max_output_tokens)

    def build(messages: Sequence[Any], instruction: str) -> Any:
        return builder.build_compaction_request(messages, instruction, max_tokens=max_tokens)

    provider = telemetry.side_requests(
        session.metered(model.provider, RequestKind.COMPACT), RequestKind.COMPACT.value
    )
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


def build_tool_use_summarizer(
    options: AgentOptions,
    model: ModelChoice,
    session: Session,
    tool_context: ToolContext,
    telemetry: Telemetry,
) -> ModelSummarizer | None:
    """One-line summaries of tool batches by a small model (None: off, or no such model)."""
    if not options.model.tool_use_summaries:
        return None
    metered = session.metered(model.provider, RequestKind.SIDE, purpose=SUMMARY_PURPOSE)
    provider = telemetry.side_requests(metered, SUMMARY_PURPOSE)
    name = options.model.summary_model or default_summary_model(provider.name)
    if name is None:
        return None
    return ModelSummarizer(provider, name, abort=tool_context.abort)


def has_web_search(model: ModelChoice) -> bool:
    """Whether the provider has the API's server-side web search: only the Messages API
    (an OpenAI-compatible server has none, so WebSearch is not offered there)."""
    return model.provider.name == "anthropic"


def build_web_models(
    options: AgentOptions, model: ModelChoice, session: Session, telemetry: Telemetry
) -> WebModels:
    """Whom WebSearch and WebFetch ask, each metered as a side request under its purpose:
    WebSearch the session's model with the server's web search (Claude Code uses its
    main-loop model), where the provider has one; WebFetch the small fast model (the
    summaries' model: Haiku on Anthropic, else the session's model)."""

    def side(purpose: str, name: str) -> SideModel:
        metered = session.metered(model.provider, RequestKind.SIDE, purpose=purpose)
        return SideModel(telemetry.side_requests(metered, purpose), name)

    fast = options.model.summary_model or default_summary_model(model.provider.name) or model.name
    search = side(SEARCH_PURPOSE, model.name) if has_web_search(model) else None
    return WebModels(search=search, fetch=side(FETCH_PURPOSE, fast))
