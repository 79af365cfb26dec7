"""The query loop: a state machine that decides what happens next, and nothing else."""

from .deps import AttachmentSource, Compactor, QueryParams, RequestFactory
from .events import (
    ApiRetry,
    CompactionEvent,
    CompactTrigger,
    LoopEvent,
    MessageDraft,
    MessageEvent,
    RequestStart,
    SideUsage,
    StreamDelta,
    TerminalEvent,
    TransitionEvent,
)
from .query import query, query_loop
from .reasons import Continue, Terminal
from .state import State

__all__ = [
    "ApiRetry",
    "AttachmentSource",
    "CompactTrigger",
    "CompactionEvent",
    "Compactor",
    "Continue",
    "LoopEvent",
    "MessageDraft",
    "MessageEvent",
    "QueryParams",
    "RequestFactory",
    "RequestStart",
    "SideUsage",
    "State",
    "StreamDelta",
    "Terminal",
    "TerminalEvent",
    "TransitionEvent",
    "query",
    "query_loop",
]
