"""What the loop needs from the rest of queryloop, as small protocols.

The loop composes; these seams keep each collaborator replaceable and testable with fakes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..hooks.types import LoopHooks, StopHook
from ..messages.types import AttachmentMessage, Message
from ..providers.base import ModelProvider, ModelRequest
from ..providers.errors import PromptTooLongError
from ..tools.base import PermissionChecker, Tool, ToolContext, ToolHooks
from .summaries import DEFAULT_GRACE_S, ToolUseSummarizer

if TYPE_CHECKING:  # a type only: importing the loop does not load the compaction package
    from ..compact.autocompact import AutoCompactTracking
    from ..tools.structured_output import StructuredOutputTool


class RequestFactory(Protocol):
    """Builds the API request for a message array (normalization, context, cache markers).

    `model` is the thread's model: the one place its name is kept. A query starts with it
    and `build(model=...)` names another only after a fallback (the loop's `State.model`)."""

    @property
    def model(self) -> str: ...

    def build(
        self, messages: Sequence[Message], *, max_tokens: int, model: str | None = None
    ) -> ModelRequest: ...


class CompactionOutcome(Protocol):
    """The result of a compaction (auto, reactive or manual): the new history, and its
    size in tokens before and after (for `CompactionEvent`)."""

    @property
    def messages(self) -> Sequence[Message]: ...
    @property
    def pre_tokens(self) -> int: ...
    @property
    def post_tokens(self) -> int: ...


class PreprocessOutcome(Protocol):
    """What a compaction preprocess pass returns."""

    @property
    def messages_for_query(self) -> Sequence[Message]: ...
    @property
    def new_messages(self) -> Sequence[Message]: ...
    @property
    def tracking(self) -> AutoCompactTracking: ...
    @property
    def context_management(self) -> Mapping[str, Any] | None: ...
    @property
    def compacted(self) -> bool: ...
    @property
    def compaction(self) -> CompactionOutcome | None:
        """The autocompaction this pass made (read when `compacted`)."""
        ...


class Compactor(Protocol):
    """The layered compaction pipeline, as the loop drives it."""

    async def preprocess(
        self,
        messages: Sequence[Message],
        tracking: AutoCompactTracking | None,
        *,
        query_source: str = "main",
    ) -> PreprocessOutcome:
        """The view to send; `tracking` None (a query's first pass) starts a fresh one."""
        ...

    def is_at_blocking_limit(self, messages: Sequence[Message]) -> bool: ...

    async def drain_collapses(self) -> bool: ...

    async def reactive(
        self, messages: Sequence[Message], error: PromptTooLongError | None
    ) -> CompactionOutcome | None: ...


AttachmentSource = Callable[
    [Sequence[Message], ToolContext], Awaitable[Sequence[AttachmentMessage]]
]
"""Returns the attachment messages to add before the next turn (after tool results)."""

CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"


@dataclass(frozen=True)
class QueryParams:
    """Everything one `query()` needs. Built by `Agent`, or by hand for embedding the loop."""

    provider: ModelProvider
    request_builder: RequestFactory
    """Builds each request; its `model` is the model a query starts with."""
    tool_context: ToolContext
    tools: Sequence[Tool] = ()
    max_output_tokens: int = 8_192
    """The output limit of a normal request."""
    max_output_tokens_ceiling: int = 64_000
    """What a max_tokens stop escalates to (the model's maximum)."""
    fallback_model: str | None = None
    fallback_provider: ModelProvider | None = None
    """The provider for the fallback model; None means the same provider."""
    permission: PermissionChecker | None = None
    tool_hooks: ToolHooks | None = None
    stop_hooks: Sequence[StopHook] = ()
    loop_hooks: LoopHooks | None = None
    """PostToolBatch after each batch of tools, StopFailure when a turn ends on an API error."""
    compactor: Compactor | None = None
    attachments: AttachmentSource | None = None
    max_turns: int | None = None
    token_budget: int | None = None
    max_tool_concurrency: int = 10
    streaming_tools: bool = True
    stream_retries: int = 2
    """How often an interrupted stream is retried before the turn fails."""
    session_id: str = ""
    tool_use_summarizer: ToolUseSummarizer | None = None
    """Writes a one-line summary of each tool batch, beside the next model call (None: off)."""
    summary_grace_s: float = DEFAULT_GRACE_S
    """How long the end of a query waits for summaries still being written."""
    task_events: Callable[[], Sequence[Any]] | None = None
    """Background-task events since the last call (`TaskManager.drain_events`); the loop
    yields them between its own events, so the stream carries them."""
    output_tool: StructuredOutputTool | None = None
    """The prompt must end with a valid call of this tool, which is among `tools` (None: a
    prompt ends when the model stops; docs/structured-output.md)."""
