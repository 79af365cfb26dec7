"""Rewinding a session to an earlier prompt: code, conversation, or both.

- code: the files Write/Edit/MultiEdit changed at or after that prompt go back to how they
  were before it (`CheckpointStore.restore_code`);
- conversation: the prompt and everything after it leave the message array; in the
  transcript (append-only) each is voided by a tombstone, so a resume sees the rewound
  conversation. Checkpoints from that prompt on are dropped.

Changes made through Bash are not tracked and are not undone (the REPL says so where the
user chooses). The same functions serve the REPL's /rewind, `Agent.rewind()` and the
headless `queryloop rewind`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from ..errors import QueryloopError
from ..messages.constructors import tombstone
from ..messages.types import Message, TombstoneReason, UserMessage
from ..tools.base import PostToolUseOutcome, PreToolUseOutcome, ToolContext, ToolHooks, ToolResult
from .store import TRACKED_TOOLS, Checkpoint, CheckpointStore, RestoreReport

BASH_NOTE = "Changes made through Bash (or outside queryloop) are not tracked and are not undone."


class RewindMode(StrEnum):
    """What to restore."""

    BOTH = "both"
    CODE = "code"
    CONVERSATION = "conversation"

    @property
    def code(self) -> bool:
        """Files are restored."""
        return self in (RewindMode.BOTH, RewindMode.CODE)

    @property
    def conversation(self) -> bool:
        """Messages are removed."""
        return self in (RewindMode.BOTH, RewindMode.CONVERSATION)


class RewindError(QueryloopError):
    """The rewind cannot be done as asked (unknown prompt, compacted away, ...)."""


@dataclass(frozen=True, slots=True)
class RewindOutcome:
    """What a rewind did. `prompt` is the text of the prompt rewound to (to edit, resend)."""

    checkpoint: Checkpoint
    mode: RewindMode
    messages: tuple[Message, ...]
    """The message array after the rewind."""
    removed: tuple[Message, ...] = ()
    code: RestoreReport = field(default_factory=RestoreReport)

    @property
    def prompt(self) -> str:
        """The full text of the prompt rewound to, when the array still had it."""
        for message in self.removed[:1]:
            if isinstance(message, UserMessage) and isinstance(message.content, str):
                return message.content
        return self.checkpoint.prompt


def rewind(
    store: CheckpointStore,
    messages: Sequence[Message],
    ref: int | str,
    mode: RewindMode = RewindMode.BOTH,
) -> RewindOutcome:
    """Rewind to the prompt `ref` (its number, or its message uuid)."""
    checkpoint = store.find(ref)
    if checkpoint is None:
        known = ", ".join(str(c.number) for c in store.checkpoints()) or "none"
        raise RewindError(f"no checkpoint {ref!r} in this session (checkpoints: {known})")
    kept: list[Message] = list(messages)
    removed: list[Message] = []
    if mode.conversation:
        kept, removed = split_before(messages, checkpoint.prompt_uuid)
    report = store.restore_code(checkpoint) if mode.code else RestoreReport()
    if mode.conversation:
        store.drop_from(checkpoint)
    return RewindOutcome(checkpoint, mode, tuple(kept), tuple(removed), report)


def split_before(
    messages: Sequence[Message], prompt_uuid: str
) -> tuple[list[Message], list[Message]]:
    """(messages before the prompt, the prompt and what follows)."""
    for index, message in enumerate(messages):
        if message.uuid == prompt_uuid:
            return list(messages[:index]), list(messages[index:])
    raise RewindError(
        "that prompt is no longer in the conversation (it was compacted away); "
        "only its code can be restored"
    )


def tombstones_for(removed: Sequence[Message]) -> list[Message]:
    """One tombstone per removed message: appended to the transcript, they void them."""
    return [tombstone(m.uuid, TombstoneReason.REWIND) for m in removed]


def describe(outcome: RewindOutcome) -> str:
    """One or two lines for people: what was restored."""
    parts: list[str] = []
    if outcome.mode.conversation:
        parts.append(f"conversation rewound to before prompt {outcome.checkpoint.number}")
    if outcome.mode.code:
        code = outcome.code
        changed = len(code.restored) + len(code.deleted)
        parts.append(f"{changed} file(s) restored" + (f", {len(code.deleted)} deleted" if
                                                      code.deleted else ""))  # fmt: skip
        if code.skipped:
            parts.append(f"not restorable: {', '.join(code.skipped)}")
    return "; ".join(parts) + "."


class CheckpointingHooks:
    """Wraps the session's tool hooks: before Write/Edit/MultiEdit runs, the file it names
    is saved in the current checkpoint (once per prompt), then the inner hooks run."""

    def __init__(self, inner: ToolHooks | None, store: CheckpointStore) -> None:
        self.inner = inner
        self.store = store

    async def pre_tool_use(
        self, tool_name: str, input: Mapping[str, Any], tool_use_id: str, ctx: ToolContext
    ) -> PreToolUseOutcome:
        if tool_name in TRACKED_TOOLS and isinstance(input.get("file_path"), str):
            self._save(ctx.resolve(str(input["file_path"])))
        if self.inner is None:
            return PreToolUseOutcome()
        return await self.inner.pre_tool_use(tool_name, input, tool_use_id, ctx)

    async def post_tool_use(
        self,
        tool_name: str,
        input: Mapping[str, Any],
        result: ToolResult,
        tool_use_id: str,
        ctx: ToolContext,
    ) -> PostToolUseOutcome:
        if self.inner is None:
            return PostToolUseOutcome()
        return await self.inner.post_tool_use(tool_name, input, result, tool_use_id, ctx)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # the rest of the HookRunner (stop hooks, ...)

    def _save(self, path: Path) -> None:
        try:
            self.store.before_change(path.resolve())
        except OSError:
            pass  # a snapshot that cannot be taken must not stop the edit
