"""The main thread's tools, for `assembly.assemble`: the tool set (built-in, the caller's,
MCP behind ToolSearch, skills), the tool context they run in, and the file checkpoints."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..agents.thread import ToolSet
from ..agents.tool import AgentTool
from ..checkpoints import CheckpointStore, checkpoint_folder
from ..config.workspace import Workspace
from ..context.tool_search import parse_tool_search, plan_deferral
from ..permissions.rules import RuleSet
from ..session.files import snapshots_of
from ..skills.commands import skill_read_dirs, skill_tools
from ..skills.loader import SkillSet
from ..tools import builtin_tools
from ..tools.base import FileReadRecord, Tool, ToolContext, ToolObserver
from ..tools.builtin import selected_builtin_names
from ..tools.builtin.tool_search import ToolSearchTool
from ..tools.builtin.web_search import WebSearchTool
from ..tools.deferred import is_mcp_tool
from ..tools.services import HiddenPaths, WebModels
from ..tools.structured_output import OutputSchema, StructuredOutputTool
from .options import AgentOptions

WEB_SEARCH = WebSearchTool.name

if TYPE_CHECKING:
    from ..agents.host import SubagentHost
    from ..sandbox import ExecGuard, Sandbox
    from ..tasks import TaskManager
    from .mcp_late import SessionMcp


def build_tools(
    options: AgentOptions,
    mcp: SessionMcp,
    workspace: Workspace,
    skills: SkillSet,
    context_window: int,
    session_id: Callable[[], str] | None = None,
    *,
    web_search: bool = True,
) -> ToolSet:
    """The built-in and the caller's tools, MCP tools and skill tools. MCP tools go behind
    ToolSearch only when their definitions are large (`context.tool_search`); a deferred set
    lets servers come and go without changing the tools array. The tools of servers that
    join later (still connecting at the start, or reconnected) come as they join
    (`ToolSet.late`, `agent.mcp_late.SessionMcp`). WebSearch only where the provider has the
    server's web search (`web_search`)."""
    builtin = builtin_tools(options.tools.builtin_tools, provided=[AgentTool()])
    base: list[Tool] = [
        *(t for t in builtin if web_search or t.name != WEB_SEARCH),
        *options.tools.tools,
    ]
    setting = options.tools.tool_search
    policy = parse_tool_search(setting if setting is not None else workspace.settings.tool_search)
    eager, deferred = plan_deferral(
        [*base, *mcp.at_start], context_window=context_window, policy=policy, deferrable=is_mcp_tool
    )
    if deferred:
        eager.append(ToolSearchTool(lambda: deferred))
    eager.extend(
        skill_tools(
            skills,
            builtin="Skill" in selected_builtin_names(options.tools.builtin_tools),
            session_id=session_id,
        )
    )
    return ToolSet(tuple(eager), tuple(deferred), mcp.late)


def build_output_tool(options: AgentOptions) -> StructuredOutputTool | None:
    """The `StructuredOutput` tool of the Agent's `output_type` (None without one): the main
    thread's last tool; subagents are not offered it (their answer is their tool result)."""
    output_type = options.output.output_type
    if output_type is None:
        return None
    return StructuredOutputTool(OutputSchema.of(output_type))


def with_tool(tools: ToolSet, tool: Tool | None) -> ToolSet:
    """`tools` with `tool` last among the eager ones (its schema closes the tools array)."""
    return tools if tool is None else replace(tools, eager=(*tools.eager, tool))


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
    exec_guard: ExecGuard | None = None,
    hidden_paths: HiddenPaths | None = None,
    web: WebModels | None = None,
) -> ToolContext:
    """The main thread's tool state: the folders it may read (the session folder holds
    spilled tool results the model is told to Read back; skills' folders), the env, the
    observer of its tool calls (timing, trace), the session's background tasks, the host its
    subagents start from, the Bash sandbox, the exec check and where file text is read and
    written (`file_access`). `read_files` is the session's
    record of the files the agent has seen (`Session.read_files`, restored on resume); the
    context shares that dict, and the list of loaded deferred tools (`Session.loaded_tools`)
    likewise."""
    seen = read_files if read_files is not None else {}
    return ToolContext(
        read_files=seen,
        loaded_deferred_tools=loaded_tools if loaded_tools is not None else [],
        file_snapshots=snapshots_of(seen),
        tasks=tasks,
        subagents=subagents,
        sandbox=sandbox,
        exec_guard=exec_guard,
        hidden_paths=hidden_paths,
        web=web if web is not None else WebModels(),
        files=options.tools.file_access,
        cwd=options.workspace.cwd,
        additional_dirs=[
            *workspace.settings.additional_directories,
            *_existing(session_dir),
            *skill_read_dirs(skills),
        ],
        session_dir=session_dir,
        env=with_plugin_path({**workspace.settings.env, **options.workspace.env}, workspace),
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


def build_checkpoints(tool_context: ToolContext) -> CheckpointStore:
    """Per-prompt file snapshots, in the session folder (none when not persisted)."""
    folder = tool_context.session_dir
    return CheckpointStore(checkpoint_folder(folder) if folder else None)


def _existing(folder: Path | None) -> list[Path]:
    if folder is None:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    return [folder.resolve()]


def web_search_notices(rules: RuleSet, *, offered: bool) -> list[str]:
    """Where WebSearch is not offered, one notice naming the permission rules that name it
    (they have nothing to match)."""
    if offered:
        return []
    named = [str(r) for r in (*rules.allow, *rules.ask, *rules.deny) if r.tool == WEB_SEARCH]
    if not named:
        return []
    return [
        f"{WEB_SEARCH} is not offered with an OpenAI-compatible provider (it needs the "
        f"Messages API's server-side web search), so the rule(s) {', '.join(named)} match "
        "nothing"
    ]
