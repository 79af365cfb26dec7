"""The internal message array and its normalization into strict API messages.

Pure functions and data only: this package imports nothing else of queryloop's.
"""

from .blocks import (
    AssistantContentBlock,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserContentBlock,
    block_from_api,
    block_to_api,
)
from .constructors import (
    assistant_message,
    attachment_message,
    compact_boundary,
    meta_user_message,
    system_message,
    text_of,
    tombstone,
    tool_result_message,
    tool_uses_of,
    user_message,
)
from .serialization import MessageDecodeError, message_from_dict, message_to_dict
from .types import (
    AssistantMessage,
    Attachment,
    AttachmentMessage,
    Message,
    ProgressMessage,
    SystemMessage,
    SystemSubtype,
    TombstoneMessage,
    ToolUseSummaryMessage,
    UserMessage,
)
from .usage import Usage

__all__ = [
    "AssistantContentBlock",
    "AssistantMessage",
    "Attachment",
    "AttachmentMessage",
    "ContentBlock",
    "DocumentBlock",
    "ImageBlock",
    "Message",
    "MessageDecodeError",
    "ProgressMessage",
    "RedactedThinkingBlock",
    "SystemMessage",
    "SystemSubtype",
    "TextBlock",
    "ThinkingBlock",
    "TombstoneMessage",
    "ToolResultBlock",
    "ToolUseBlock",
    "ToolUseSummaryMessage",
    "Usage",
    "UserContentBlock",
    "UserMessage",
    "assistant_message",
    "attachment_message",
    "block_from_api",
    "block_to_api",
    "compact_boundary",
    "message_from_dict",
    "message_to_dict",
    "meta_user_message",
    "system_message",
    "text_of",
    "tombstone",
    "tool_result_message",
    "tool_uses_of",
    "user_message",
]
