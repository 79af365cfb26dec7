"""Context injection in three channels, attachments, delta announcements, cache-aware requests.

Channels, split by how often their content changes (see docs/context.md):

1. the system prompt (`build_system_prompt`, `append_system_context`): fixed for the session;
   its static prefix is identical for every session;
2. one meta user message in front of the conversation (`prepend_user_context`): project
   memory (found and read by `queryloop.config.memory`) and the date, fixed for the session;
3. attachments (`get_attachments`): recomputed every turn, appended to the history, so they
   never disturb the cached prefix of the first two.

`RequestBuilder` puts them together with stable tool schemas and cache breakpoints.
Importing this package registers the renderers of its attachment types.
"""

from ..tools.deferred import (
    is_mcp_tool,
    loaded_deferred_tools,
    loaded_tool_names,
    mark_loaded,
    partition_tools,
    search_tools,
)
from .attachments import (
    AttachmentContext,
    get_attachment_messages,
    get_attachments,
    maybe,
)
from .cache import MAX_CACHE_BREAKPOINTS, apply_cache_breakpoints, cache_control, count_breakpoints
from .deltas import agent_listing_delta, deferred_tools_delta, mcp_instructions_delta
from .kinds import AttachmentType
from .renderers import register_renderers
from .request import DEFAULT_COMPACTION_INSTRUCTIONS, RequestBuilder, ToolSchemaCache
from .system_context import append_system_context, get_system_context
from .system_prompt import (
    DEFAULT_STATIC_PREFIX,
    SYSTEM_PROMPT_DYNAMIC_BOUNDARY,
    build_dynamic_suffix,
    build_system_prompt,
    split_at_boundary,
)
from .user_context import MemoryFile, build_user_context, prepend_user_context

register_renderers()

__all__ = [
    "DEFAULT_COMPACTION_INSTRUCTIONS",
    "DEFAULT_STATIC_PREFIX",
    "MAX_CACHE_BREAKPOINTS",
    "SYSTEM_PROMPT_DYNAMIC_BOUNDARY",
    "AttachmentContext",
    "AttachmentType",
    "MemoryFile",
    "RequestBuilder",
    "ToolSchemaCache",
    "agent_listing_delta",
    "append_system_context",
    "apply_cache_breakpoints",
    "build_dynamic_suffix",
    "build_system_prompt",
    "build_user_context",
    "cache_control",
    "count_breakpoints",
    "deferred_tools_delta",
    "get_attachment_messages",
    "get_attachments",
    "get_system_context",
    "is_mcp_tool",
    "loaded_deferred_tools",
    "loaded_tool_names",
    "mark_loaded",
    "maybe",
    "mcp_instructions_delta",
    "partition_tools",
    "prepend_user_context",
    "register_renderers",
    "search_tools",
    "split_at_boundary",
]
