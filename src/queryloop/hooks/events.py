"""Claude Code's 31 hook events: which queryloop fires, what each matcher filters, the
handler types each accepts and the default timeouts (its hooks reference,
https://code.claude.com/docs/en/hooks; docs/hooks.md has the table)."""

from __future__ import annotations

from enum import StrEnum


class HookEvent(StrEnum):
    """Every hook event of Claude Code's hooks reference, by its name."""

    # fired by queryloop
    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    POST_TOOL_USE_FAILURE = "PostToolUseFailure"
    POST_TOOL_BATCH = "PostToolBatch"
    PERMISSION_REQUEST = "PermissionRequest"
    PERMISSION_DENIED = "PermissionDenied"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    NOTIFICATION = "Notification"
    STOP = "Stop"
    STOP_FAILURE = "StopFailure"
    SUBAGENT_START = "SubagentStart"
    SUBAGENT_STOP = "SubagentStop"
    SESSION_START = "SessionStart"
    SESSION_END = "SessionEnd"
    PRE_COMPACT = "PreCompact"
    POST_COMPACT = "PostCompact"
    INSTRUCTIONS_LOADED = "InstructionsLoaded"
    CWD_CHANGED = "CwdChanged"
    CONFIG_CHANGE = "ConfigChange"
    TASK_CREATED = "TaskCreated"
    TASK_COMPLETED = "TaskCompleted"
    # accepted, never fired (queryloop has no such moment)
    SETUP = "Setup"
    USER_PROMPT_EXPANSION = "UserPromptExpansion"
    MESSAGE_DISPLAY = "MessageDisplay"
    TEAMMATE_IDLE = "TeammateIdle"
    DIRECTORY_ADDED = "DirectoryAdded"
    FILE_CHANGED = "FileChanged"
    WORKTREE_CREATE = "WorktreeCreate"
    WORKTREE_REMOVE = "WorktreeRemove"
    ELICITATION = "Elicitation"
    ELICITATION_RESULT = "ElicitationResult"


NOT_FIRED = frozenset(
    {
        HookEvent.SETUP,
        HookEvent.MESSAGE_DISPLAY,
        HookEvent.TEAMMATE_IDLE,
        HookEvent.DIRECTORY_ADDED,
        HookEvent.FILE_CHANGED,
        HookEvent.WORKTREE_CREATE,
        HookEvent.WORKTREE_REMOVE,
        HookEvent.ELICITATION,
        HookEvent.ELICITATION_RESULT,
    }
)
"""Events a settings file may name (a warning says they never fire), for moments queryloop
does not have: no --init/--maintenance, no agent teams, no
/add-dir, no file watcher, no worktrees, no MCP elicitation."""

TOOL_EVENTS = frozenset(
    {
        HookEvent.PRE_TOOL_USE,
        HookEvent.POST_TOOL_USE,
        HookEvent.POST_TOOL_USE_FAILURE,
        HookEvent.PERMISSION_REQUEST,
        HookEvent.PERMISSION_DENIED,
    }
)
"""Events whose matcher filters the tool name and where a handler's `if` is evaluated; on
every other event a handler with `if` never runs (Claude Code's rule)."""

NO_MATCHER = frozenset(
    {
        HookEvent.USER_PROMPT_SUBMIT,
        HookEvent.POST_TOOL_BATCH,
        HookEvent.STOP,
        HookEvent.TEAMMATE_IDLE,
        HookEvent.TASK_CREATED,
        HookEvent.TASK_COMPLETED,
        HookEvent.WORKTREE_CREATE,
        HookEvent.WORKTREE_REMOVE,
        HookEvent.MESSAGE_DISPLAY,
        HookEvent.CWD_CHANGED,
    }
)
"""Events without matcher support: a matcher given for them is ignored (they always fire)."""

NARROW_MATCHER = frozenset({HookEvent.FILE_CHANGED, HookEvent.STOP_FAILURE})
"""Events whose exact-match set is letters, digits, `_` and `|` only."""

MODEL_HOOK_EVENTS = frozenset(
    {
        HookEvent.PERMISSION_DENIED,
        HookEvent.PERMISSION_REQUEST,
        HookEvent.POST_TOOL_BATCH,
        HookEvent.POST_TOOL_USE,
        HookEvent.POST_TOOL_USE_FAILURE,
        HookEvent.PRE_TOOL_USE,
        HookEvent.STOP,
        HookEvent.SUBAGENT_STOP,
        HookEvent.TASK_COMPLETED,
        HookEvent.TASK_CREATED,
        HookEvent.TEAMMATE_IDLE,
        HookEvent.USER_PROMPT_EXPANSION,
        HookEvent.USER_PROMPT_SUBMIT,
    }
)
"""Events that accept `prompt` (and `agent`) handlers; the others take command, http and
mcp_tool only."""

COMMAND_ONLY = frozenset({HookEvent.SESSION_START, HookEvent.SETUP})
"""SessionStart and Setup take `command` and `mcp_tool` handlers only (no http, no prompt)."""

DEFAULT_TIMEOUT = 600.0
"""Seconds for command, http and mcp_tool handlers."""
PROMPT_TIMEOUT = 30.0
AGENT_TIMEOUT = 60.0
SHORT_TIMEOUTS = {HookEvent.USER_PROMPT_SUBMIT: 30.0, HookEvent.MESSAGE_DISPLAY: 10.0}
"""Events that lower the command/http/mcp_tool default."""
SESSION_END_BUDGET = 1.5
"""SessionEnd hooks share this budget unless a hook's own timeout is longer (max 60 s)."""
SESSION_END_MAX = 60.0
