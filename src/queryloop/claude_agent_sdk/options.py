"""`ClaudeAgentOptions` and the types of its fields (the SDK's names and defaults).

Every field the SDK has is here, so options written for it construct unchanged. What each
one does on queryloop is decided in one place, `mapping.py`: most map onto an `Agent`
option; the few queryloop cannot honour raise `UnsupportedOptionError` naming the field
when set to anything but their default (docs/claude-agent-sdk.md lists them).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NotRequired, TypeAlias, TypedDict

from .hook_types import HookMatcher
from .permission_types import CanUseTool, PermissionMode

SettingSource: TypeAlias = Literal["user", "project", "local"]
SdkBeta: TypeAlias = Literal["context-1m-2025-08-07"]
EffortLevel: TypeAlias = Literal["low", "medium", "high", "xhigh", "max"]


class SystemPromptPreset(TypedDict):
    """`{"type": "preset", "preset": "claude_code"}`: queryloop's own instructions (its
    counterpart of Claude Code's prompt), with `append` added after them."""

    type: Literal["preset"]
    preset: Literal["claude_code"]
    append: NotRequired[str]
    exclude_dynamic_sections: NotRequired[bool]


class SystemPromptFile(TypedDict):
    """`{"type": "file", "path": ...}`: the system prompt is the file's text."""

    type: Literal["file"]
    path: str


class ToolsPreset(TypedDict):
    """`{"type": "preset", "preset": "claude_code"}`: every built-in tool."""

    type: Literal["preset"]
    preset: Literal["claude_code"]


class McpStdioServerConfig(TypedDict):
    """A server queryloop starts as a subprocess and talks to over stdio."""

    type: NotRequired[Literal["stdio"]]
    command: str
    args: NotRequired[list[str]]
    env: NotRequired[dict[str, str]]


class McpSSEServerConfig(TypedDict):
    """A server over the old SSE transport (not supported: use http)."""

    type: Literal["sse"]
    url: str
    headers: NotRequired[dict[str, str]]


class McpHttpServerConfig(TypedDict):
    """A server over streamable HTTP."""

    type: Literal["http"]
    url: str
    headers: NotRequired[dict[str, str]]


class McpSdkServerConfig(TypedDict):
    """An in-process server made by `create_sdk_mcp_server`: its tools run in your
    process, as queryloop tools named `mcp__<key>__<tool>`."""

    type: Literal["sdk"]
    name: str
    instance: Any


McpServerConfig: TypeAlias = (
    McpStdioServerConfig | McpSSEServerConfig | McpHttpServerConfig | McpSdkServerConfig
)


class SdkPluginConfig(TypedDict):
    """A local plugin folder in Claude Code's layout (docs/plugins.md)."""

    type: Literal["local"]
    path: str


@dataclass
class AgentDefinition:
    """A subagent type for the Agent tool (`agents={"name": AgentDefinition(...)}`).

    `tools` None gives it every tool of the parent; `model` is "sonnet", "opus", "haiku",
    "inherit" or a model id; `permissionMode` can only make it stricter than its parent.
    The SDK's `skills`, `memory`, `mcpServers`, `initialPrompt` and `effort` are not
    supported (an error names them when set)."""

    description: str
    prompt: str
    tools: list[str] | None = None
    disallowedTools: list[str] | None = None  # the SDK's spelling
    model: str | None = None
    skills: list[str] | None = None
    memory: Literal["user", "project", "local"] | None = None
    mcpServers: list[str | dict[str, Any]] | None = None
    initialPrompt: str | None = None
    maxTurns: int | None = None
    background: bool | None = None
    effort: EffortLevel | int | None = None
    permissionMode: PermissionMode | None = None


@dataclass
class ClaudeAgentOptions:
    """The options of `query()` and `ClaudeSDKClient`, field for field the SDK's.

    What maps one to one: `allowed_tools`, `disallowed_tools` (rules), `permission_mode`,
    `can_use_tool`, `hooks`, `max_turns`, `model`, `fallback_model`, `cwd`, `add_dirs`,
    `env`, `agents`, `resume`, `continue_conversation`, `session_id`, `mcp_servers`,
    `include_partial_messages`, `max_budget_usd`, `thinking`, `max_thinking_tokens`,
    `tools`, `system_prompt`, `setting_sources`, `plugins`, `enable_file_checkpointing`, and
    `extra_args={"replay-user-messages": None}`. The rest
    raise `UnsupportedOptionError` when set (docs/claude-agent-sdk.md)."""

    tools: list[str] | ToolsPreset | None = None
    allowed_tools: list[str] = field(default_factory=list)
    system_prompt: str | SystemPromptPreset | SystemPromptFile | None = None
    mcp_servers: dict[str, McpServerConfig] | str | Path = field(default_factory=dict)
    strict_mcp_config: bool = False
    permission_mode: PermissionMode | None = None
    continue_conversation: bool = False
    resume: str | None = None
    session_id: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    disallowed_tools: list[str] = field(default_factory=list)
    model: str | None = None
    fallback_model: str | None = None
    betas: list[SdkBeta] = field(default_factory=list)
    permission_prompt_tool_name: str | None = None
    cwd: str | Path | None = None
    cli_path: str | Path | None = None
    settings: str | None = None
    add_dirs: list[str | Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    extra_args: dict[str, str | None] = field(default_factory=dict)
    max_buffer_size: int | None = None
    debug_stderr: Any = sys.stderr
    stderr: Callable[[str], None] | None = None
    can_use_tool: CanUseTool | None = None
    hooks: dict[str, list[HookMatcher]] | None = None
    user: str | None = None
    include_partial_messages: bool = False
    include_hook_events: bool = False
    forward_subagent_text: bool = False
    fork_session: bool = False
    resume_session_at: str | None = None
    resume_drops_turn: str | None = None
    agents: dict[str, AgentDefinition] | None = None
    setting_sources: list[SettingSource] | None = None
    skills: list[str] | Literal["all"] | None = None
    sandbox: dict[str, Any] | None = None
    plugins: list[SdkPluginConfig] = field(default_factory=list)
    max_thinking_tokens: int | None = None
    thinking: dict[str, Any] | None = None
    effort: EffortLevel | None = None
    output_format: dict[str, Any] | None = None
    enable_file_checkpointing: bool = False
    session_store: Any = None
    session_store_flush: Literal["batched", "eager"] = "batched"
    load_timeout_ms: int = 60_000
    task_budget: dict[str, Any] | None = None
