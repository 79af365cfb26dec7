"""The attachment types the context package produces (each has a renderer in `renderers`)."""

from __future__ import annotations

from enum import StrEnum


class AttachmentType(StrEnum):
    """`Attachment.type` values. Stored in transcripts: never rename one."""

    FILE = "file"
    DIRECTORY = "directory"
    MCP_RESOURCE = "mcp_resource"
    QUEUED_COMMAND = "queued_command"
    TASK_NOTIFICATION = "task_notification"
    DATE_CHANGE = "date_change"
    MEMORY_CHANGE = "memory_change"
    GIT_STATUS_CHANGE = "git_status_change"
    ENVIRONMENT_CHANGE = "environment_change"
    EDITED_FILE = "edited_file"
    NESTED_MEMORY = "nested_memory"
    TODO_REMINDER = "todo_reminder"
    DEFERRED_TOOLS_DELTA = "deferred_tools_delta"
    MCP_INSTRUCTIONS_DELTA = "mcp_instructions_delta"
    AGENT_LISTING_DELTA = "agent_listing_delta"
    SKILL_LISTING_DELTA = "skill_listing_delta"
    CONTEXT_USAGE = "context_usage"
    DIAGNOSTICS = "diagnostics"
