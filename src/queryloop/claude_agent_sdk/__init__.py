"""The Claude Agent SDK's Python interface on queryloop's loop.

Code written for `claude_agent_sdk` runs when only its import changes::

    from queryloop.claude_agent_sdk import query, ClaudeAgentOptions

    async for message in query(prompt="What is 2 + 2?", options=ClaudeAgentOptions()):
        print(message)

`query()`, `ClaudeSDKClient`, `ClaudeAgentOptions`, the message and block types, `@tool`
with `create_sdk_mcp_server`, hooks (`HookMatcher`), `can_use_tool` and the error classes
keep the SDK's names, fields and behaviour; underneath is a `queryloop.Agent` in this
process, no Node and no CLI. An option queryloop cannot honour raises
`UnsupportedOptionError` naming it. docs/claude-agent-sdk.md says what maps one to one,
what differs and what queryloop adds.
"""

from .. import __version__
from ..session.store_api import (
    SessionKey,
    SessionListSubkeysKey,
    SessionStoreEntry,
    SessionStoreListEntry,
)
from ..sessions import (
    ForkSessionResult,
    SDKSessionInfo,
    SessionMessage,
    delete_session,
    fork_session,
    get_session_info,
    get_session_messages,
    list_sessions,
    rename_session,
    tag_session,
)
from .client import ClaudeSDKClient
from .errors import (
    ClaudeSDKError,
    CLIConnectionError,
    CLIJSONDecodeError,
    CLINotFoundError,
    MessageParseError,
    ProcessError,
    ResultError,
    UnsupportedOptionError,
)
from .query import query
from .stores import InMemorySessionStore
from .tools import SdkMcpTool, ToolAnnotations, create_sdk_mcp_server, tool
from .types import *  # noqa: F403 - the SDK exports every type at the top level too
from .types import __all__ as _type_names

__all__ = [
    "CLIConnectionError",
    "CLIJSONDecodeError",
    "CLINotFoundError",
    "ClaudeSDKClient",
    "ClaudeSDKError",
    "ForkSessionResult",
    "InMemorySessionStore",
    "MessageParseError",
    "ProcessError",
    "ResultError",
    "SDKSessionInfo",
    "SessionKey",
    "SessionListSubkeysKey",
    "SessionMessage",
    "SessionStoreEntry",
    "SessionStoreListEntry",
    "SdkMcpTool",
    "ToolAnnotations",
    "UnsupportedOptionError",
    "__version__",
    "create_sdk_mcp_server",
    "delete_session",
    "fork_session",
    "get_session_info",
    "get_session_messages",
    "list_sessions",
    "query",
    "rename_session",
    "tag_session",
    "tool",
    *_type_names,
]
