"""`ClaudeAgentOptions` -> the `Agent` that honours them: every field decided here, once.

A field either maps onto an Agent option (most do, one to one; `session_store` after
`session.async_store.as_session_store` adapts an SDK-shaped async store), is honoured by the
conversation driving the Agent (`include_partial_messages`, `max_budget_usd`, `resume`,
`continue_conversation`, `fork_session`, `resume_session_at`), or cannot be honoured: then
a value other than its default is an `UnsupportedOptionError` naming it and saying why.
`UNSUPPORTED` lists those; docs/claude-agent-sdk.md has the same table for people.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..agents.definitions import AgentDefinition as LoopAgentDefinition
from ..session.async_store import as_session_store
from ..tools.base import Tool
from .callbacks import PermissionBridge, loop_hooks
from .errors import UnsupportedOptionError
from .options import AgentDefinition, ClaudeAgentOptions
from .tools import server_tools

_NO_CLI = "queryloop runs its loop in this process; there is no Claude Code CLI"
UNSUPPORTED: Mapping[str, str] = {
    "cli_path": _NO_CLI,
    "max_buffer_size": f"{_NO_CLI} whose output is buffered",
    "debug_stderr": f"{_NO_CLI}, so there is no stderr to report",
    "user": "queryloop does not tag sessions with a user",
    "betas": "queryloop sends the beta headers a request needs itself",
    "permission_prompt_tool_name": "use can_use_tool (an MCP tool cannot answer prompts)",
    "settings": "settings files are read from their scopes (docs/settings.md)",
    "strict_mcp_config": "the project's .mcp.json loads when the folder is trusted",
    "include_hook_events": "hook runs are not reported as messages",
    "forward_subagent_text": "subagents report only their final answer (docs/agents.md)",
    "resume_drops_turn": "a resumed session is loaded whole",
    "sandbox": "configure the Bash sandbox in the settings' `sandbox` key (docs/sandbox.md)",
    "effort": "queryloop does not send an effort level",
    "load_timeout_ms": "a load waits for the store (each record is stored before the loop "
    "goes on, so no call is given up on)",
    "task_budget": "use max_budget_usd or max_turns",
}
"""Fields queryloop cannot honour, and why: set to anything but the default, they raise."""

_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
_UNSUPPORTED_AGENT_FIELDS = ("skills", "memory", "mcpServers", "initialPrompt", "effort")


@dataclass(frozen=True)
class AgentPlan:
    """How to make the Agent for a set of options: its model and keyword arguments, how it
    starts (new, `resume`, `continue_conversation`), and what the conversation honours."""

    model: str | None
    kwargs: dict[str, Any]
    resume: str | None = None
    continue_latest: bool = False
    include_partial_messages: bool = False
    max_budget_usd: float | None = None
    permission: PermissionBridge | None = None
    replay_user_messages: bool = False
    """Report the prompts too, as `UserMessage`s with their uuid (for `rewind_files`)."""
    fork_session: bool = False
    """Resume a fork of `resume` (a new id, fresh uuids) instead of `resume` itself."""
    resume_session_at: str | None = None
    """Resume at this message uuid (with `fork_session`: fork up to it)."""


def plan_agent(options: ClaudeAgentOptions) -> AgentPlan:
    """The Agent plan for `options`; raises `UnsupportedOptionError` for what cannot be
    honoured, before anything starts."""
    _refuse_unsupported(options)
    if options.resume and options.continue_conversation:
        raise UnsupportedOptionError(
            "continue_conversation", "it cannot be combined with resume (give one of them)"
        )
    if options.session_id and (options.resume or options.continue_conversation):
        raise UnsupportedOptionError(
            "session_id", "a resumed or continued session keeps its own id"
        )
    if (options.fork_session or options.resume_session_at) and not options.resume:
        name = "fork_session" if options.fork_session else "resume_session_at"
        raise UnsupportedOptionError(name, "it applies to a resumed session: give resume too")
    cwd = Path(options.cwd).expanduser() if options.cwd is not None else Path.cwd()
    tools, servers, mcp_file = _mcp(options.mcp_servers)
    bridge = PermissionBridge(options.can_use_tool) if options.can_use_tool else None
    kwargs: dict[str, Any] = {
        "cwd": cwd,
        "tools": tools,
        "builtin_tools": _builtin_tools(options.tools),
        "allowed_tools": list(options.allowed_tools),
        "disallowed_tools": list(options.disallowed_tools),
        "permission_mode": checked_mode(options.permission_mode),
        "max_turns": options.max_turns,
        "fallback_model": options.fallback_model,
        "env": dict(options.env),
        "add_dirs": list(options.add_dirs),
        "mcp_servers": servers or None,
        "mcp_config": mcp_file,
        "can_use_tool": bridge,
        "hooks": loop_hooks(options.hooks) if options.hooks else None,
        "agents": [_agent(name, d) for name, d in (options.agents or {}).items()],
        "thinking": _thinking(options),
        "output_type": _output_type(options.output_format),
        "session_id": options.session_id,
        "setting_sources": options.setting_sources,
        "trust": _trusts_project(options.setting_sources),
        "plugin_dirs": _plugin_dirs(options.plugins, cwd),
        "on_notice": _stderr_lines(options.stderr),
        "session_store": (
            as_session_store(options.session_store) if options.session_store is not None else None
        ),
        **_system_prompt(options.system_prompt, cwd),
    }
    _check_skills(options.skills)
    return AgentPlan(
        model=options.model,
        kwargs=kwargs,
        resume=options.resume,
        continue_latest=options.continue_conversation,
        include_partial_messages=options.include_partial_messages,
        max_budget_usd=options.max_budget_usd,
        permission=bridge,
        replay_user_messages=_replays(options.extra_args),
        fork_session=options.fork_session,
        resume_session_at=options.resume_session_at,
    )


def _trusts_project(sources: Sequence[str] | None) -> bool | None:
    """Code that names "project" (or "local") in `setting_sources` asks for that folder's
    files: its author trusts the folder, as `queryloop trust` would. The default (None, every
    scope) keeps queryloop's workspace trust, so an agent run over a stranger's repository
    runs none of its hooks or MCP servers (docs/claude-agent-sdk.md)."""
    if sources is not None and {"project", "local"} & set(sources):
        return True
    return None


def _stderr_lines(stderr: Callable[[str], None] | None) -> Callable[[str], None] | None:
    """`stderr` receives what the CLI would print there: queryloop's notices (ignored
    settings, failed MCP servers, hook warnings, ...), a line per call."""
    if stderr is None:
        return None
    callback = stderr

    def each_line(notice: str) -> None:
        for line in notice.splitlines():
            callback(line)

    return each_line


def _refuse_unsupported(options: ClaudeAgentOptions) -> None:
    defaults = ClaudeAgentOptions()
    for name, why in UNSUPPORTED.items():
        value = getattr(options, name)
        default = sys.stderr if name == "debug_stderr" else getattr(defaults, name)
        if value != default and value is not default:
            raise UnsupportedOptionError(name, why)


REPLAY = "replay-user-messages"


def _replays(extra_args: Mapping[str, str | None]) -> bool:
    """`extra_args` are CLI flags; the one queryloop honours is the SDK's documented
    `{"replay-user-messages": None}` (prompts reported with their uuid, for rewind_files)."""
    others = sorted(set(extra_args) - {REPLAY})
    if others or extra_args.get(REPLAY) is not None:
        raise UnsupportedOptionError(
            f"extra_args={dict(extra_args)!r}",
            f"{_NO_CLI} to pass arguments to; only {{{REPLAY!r}: None}} is honoured",
        )
    return REPLAY in extra_args


def checked_mode(mode: str | None) -> str | None:
    """A permission mode queryloop has (None stays None: the settings' default)."""
    if mode is None or mode in _MODES:
        return mode
    raise UnsupportedOptionError(
        f"permission_mode={mode!r}",
        f"queryloop's modes are {', '.join(_MODES)} (for dontAsk, set "
        "permissions.denyInsteadOfPrompting in the settings)",
    )


def _builtin_tools(tools: object) -> bool | list[str]:
    """`tools`: None or the claude_code preset = every built-in tool; a list = those."""
    if tools is None:
        return True
    if isinstance(tools, Mapping):
        if tools.get("type") == "preset" and tools.get("preset") == "claude_code":
            return True
        raise UnsupportedOptionError(f"tools={dict(tools)!r}", "the only preset is claude_code")
    return [str(name) for name in tools]  # type: ignore[attr-defined]  # a list of names


def _system_prompt(prompt: object, cwd: Path) -> dict[str, str | None]:
    """None: no instructions of queryloop's (the SDK's default is an empty system prompt);
    a string: that; the claude_code preset: queryloop's own, `append` after them; a file:
    its text."""
    if prompt is None:
        return {"system_prompt": ""}
    if isinstance(prompt, str):
        return {"system_prompt": prompt}
    if isinstance(prompt, Mapping) and prompt.get("type") == "preset":
        if prompt.get("exclude_dynamic_sections"):
            raise UnsupportedOptionError(
                "system_prompt.exclude_dynamic_sections",
                "the environment section stays in the system prompt (it is fixed for the "
                "session, so the prompt cache is not affected)",
            )
        return {"system_prompt": None, "append_system_prompt": prompt.get("append")}
    if isinstance(prompt, Mapping) and prompt.get("type") == "file":
        path = Path(str(prompt.get("path"))).expanduser()
        path = path if path.is_absolute() else cwd / path
        return {"system_prompt": path.read_text(encoding="utf-8")}
    raise UnsupportedOptionError(f"system_prompt={prompt!r}", "use a string, a preset or a file")


def _mcp(
    servers: object,
) -> tuple[list[Tool], dict[str, dict[str, Any]], Path | None]:
    """In-process servers become tools; the others go to the Agent as server configs; a
    path is an MCP config file."""
    if isinstance(servers, str | Path):
        return [], {}, Path(servers).expanduser()
    tools: list[Tool] = []
    configs: dict[str, dict[str, Any]] = {}
    for key, config in dict(servers or {}).items():  # type: ignore[call-overload]
        if isinstance(config, Mapping) and config.get("type") == "sdk":
            tools.extend(server_tools(key, dict(config)))
        else:
            configs[key] = dict(config)
    return tools, configs, None


def _agent(name: str, definition: AgentDefinition) -> LoopAgentDefinition:
    for field_name in _UNSUPPORTED_AGENT_FIELDS:
        if getattr(definition, field_name) is not None:
            raise UnsupportedOptionError(
                f"agents[{name!r}].{field_name}", "subagents do not support it yet"
            )
    return LoopAgentDefinition(
        name=name,
        description=definition.description,
        prompt=definition.prompt,
        tools=tuple(definition.tools) if definition.tools is not None else None,
        disallowed_tools=tuple(definition.disallowedTools or ()),
        model=definition.model,
        permission_mode=definition.permissionMode,
        max_turns=definition.maxTurns,
        background=bool(definition.background),
    )


def _output_type(output_format: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """`output_format={"type": "json_schema", "schema": {...}}`: the schema is the Agent's
    `output_type` (its value comes back as `ResultMessage.structured_output`); a schema that
    cannot work is the Agent's `ConfigError`, before anything runs."""
    if output_format is None:
        return None
    schema = output_format.get("schema")
    if output_format.get("type") != "json_schema" or not isinstance(schema, Mapping):
        raise UnsupportedOptionError(
            "output_format", 'give {"type": "json_schema", "schema": {...}} (a JSON Schema)'
        )
    return dict(schema)


def _thinking(options: ClaudeAgentOptions) -> dict[str, Any] | None:
    """`thinking` as the API takes it; else the older `max_thinking_tokens` (0: off)."""
    if options.thinking is not None:
        return dict(options.thinking)
    tokens = options.max_thinking_tokens
    if tokens is None:
        return None
    if tokens == 0:
        return {"type": "disabled"}
    return {"type": "enabled", "budget_tokens": tokens}


def _plugin_dirs(plugins: Sequence[Mapping[str, Any]], cwd: Path) -> list[Path]:
    """`plugins=[{"type": "local", "path": ...}]`: plugin folders in Claude Code's layout
    (`Agent(plugin_dirs=...)`, docs/plugins.md); a relative path is taken from `cwd`."""
    dirs = []
    for plugin in plugins:
        if plugin.get("type") != "local":
            raise UnsupportedOptionError(
                f"plugins[{dict(plugin)!r}]", "only local plugins ({'type': 'local'}) load"
            )
        path = Path(str(plugin.get("path"))).expanduser()
        dirs.append(path if path.is_absolute() else cwd / path)
    return dirs


def _check_skills(skills: object) -> None:
    if skills is not None and skills != "all":
        raise UnsupportedOptionError(
            f"skills={skills!r}", "every skill found is offered (None or 'all')"
        )
