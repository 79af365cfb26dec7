"""queryloop.tools: the Tool protocol, `@tool`, the streaming executor and built-in tools."""

from .base import (
    ALLOW,
    PASSTHROUGH,
    BaseTool,
    DenialSource,
    FileReadRecord,
    PermissionChecker,
    PermissionDecision,
    PostToolUseOutcome,
    PreToolUseOutcome,
    Tool,
    ToolContext,
    ToolError,
    ToolHooks,
    ToolProgress,
    ToolResult,
)
from .builtin import builtin_tools
from .decorator import FunctionTool, tool
from .execution import CallOutcome, find_tool, run_tool_call
from .executor import (
    StreamingToolExecutor,
    ToolRun,
    is_call_concurrency_safe,
    partition_tool_calls,
    run_tools,
)
from .output import format_validation_error, truncate_content, truncate_text

__all__ = [
    "ALLOW",
    "PASSTHROUGH",
    "BaseTool",
    "CallOutcome",
    "DenialSource",
    "FileReadRecord",
    "FunctionTool",
    "PermissionChecker",
    "PermissionDecision",
    "PostToolUseOutcome",
    "PreToolUseOutcome",
    "StreamingToolExecutor",
    "Tool",
    "ToolContext",
    "ToolError",
    "ToolHooks",
    "ToolProgress",
    "ToolResult",
    "ToolRun",
    "builtin_tools",
    "find_tool",
    "format_validation_error",
    "is_call_concurrency_safe",
    "partition_tool_calls",
    "run_tool_call",
    "run_tools",
    "tool",
    "truncate_content",
    "truncate_text",
]
