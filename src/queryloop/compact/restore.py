"""What a compaction puts back after the summary: the user's own words, recently read files
(read fresh from disk), the todo list, and the most recent rounds verbatim."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..messages.blocks import TextBlock, ToolResultBlock, ToolUseBlock
from ..messages.constructors import attachment_message, meta_user_message
from ..messages.types import (
    AssistantMessage,
    AttachmentMessage,
    Message,
    SystemMessage,
    SystemSubtype,
    UserMessage,
    new_uuid,
)
from .rounds import head_end, round_starts
from .tokens import CHARS_PER_TOKEN, estimate_text_tokens, estimate_tokens

FILE_TOOLS = ("Read", "Edit", "Write", "MultiEdit", "NotebookEdit")
USER_MESSAGES_HEADER = "The user's own messages in this session, verbatim (oldest first):"
QUEUED_PROMPT = "queued_command"
"""The attachment that carries a prompt the user typed while a turn ran (`context.kinds`)."""
FileReader = Callable[[Sequence[str]], Mapping[str, str]]


def read_files_from_disk(paths: Sequence[str]) -> dict[str, str]:
    """Read each path as UTF-8 text; missing, unreadable or binary files are skipped."""
    found: dict[str, str] = {}
    for path in paths:
        try:
            found[path] = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return found


@dataclass(frozen=True, slots=True)
class RestoreContext:
    """How to rebuild context after a summary. `recent_files` and `todos` are derived from
    the history when None (Read/Edit/Write calls, newest first; the last TodoWrite)."""

    read_files: FileReader = read_files_from_disk
    recent_files: Sequence[str] | None = None
    todos: Sequence[Mapping[str, Any]] | None = None
    max_files: int = 5
    file_budget_tokens: int = 50_000
    per_file_max_tokens: int = 5_000
    user_messages_budget_tokens: int = 8_000
    user_message_max_chars: int = 4_000
    keep_tail_tokens: int = 20_000
    max_tail_share: float = 0.25
    """The kept tail is at most this share of the history's tokens, so a compaction always
    summarises most of it: a short conversation compacted by hand keeps its last round or
    two verbatim, not everything (before, a history under `keep_tail_tokens` came back
    whole, and the next request carried every old message plus the summary)."""
    min_tail_rounds: int = 0
    """The latest rounds kept verbatim whatever the tail budget: the economy policy keeps
    the rounds of its recent tool results, so a summary of a small history keeps the
    current step (0: the budget alone decides)."""

    def tail_budget(self, history_tokens: int) -> int:
        """Tokens of verbatim tail to keep for a history of `history_tokens`."""
        return min(self.keep_tail_tokens, int(history_tokens * self.max_tail_share))


@dataclass(frozen=True, slots=True)
class RestoreCaps:
    """How much of a window of tokens each restore budget may take: a budget is capped to
    `window // n` with the `n` given here (integer shares, so the cap is exact)."""

    keep_tail: int
    files: int
    per_file: int
    user_messages: int


BELOW_THRESHOLD = RestoreCaps(keep_tail=10, files=4, per_file=10, user_messages=20)
"""Shares of the autocompact threshold: a compacted history always lands well below it,
even for small windows (every compaction the pipeline starts)."""

WITHIN_SERVER_WINDOW = RestoreCaps(keep_tail=5, files=5, per_file=10, user_messages=10)
"""Shares of the window the server reported with prompt-too-long (it may be smaller than
the client believed), applied to budgets `BELOW_THRESHOLD` already capped; the reactive
compaction then checks that its result fits that window and retries without tail and files
when it does not."""


def capped_restore(restore: RestoreContext, window: int, caps: RestoreCaps) -> RestoreContext:
    """`restore` with each budget at most its share (`caps`) of `window` tokens."""
    return replace(
        restore,
        keep_tail_tokens=min(restore.keep_tail_tokens, window // caps.keep_tail),
        file_budget_tokens=min(restore.file_budget_tokens, window // caps.files),
        per_file_max_tokens=min(restore.per_file_max_tokens, window // caps.per_file),
        user_messages_budget_tokens=min(
            restore.user_messages_budget_tokens, window // caps.user_messages
        ),
    )


def user_texts(messages: Sequence[Message]) -> list[str]:
    """Everything the user typed, oldest first, including what earlier compactions carried
    over in their boundary's metadata and the prompts queued while a turn ran."""
    texts: list[str] = []
    for message in messages:
        if isinstance(message, SystemMessage) and message.subtype is SystemSubtype.COMPACT_BOUNDARY:
            texts = [str(t) for t in message.metadata.get("user_messages", ())]
            continue
        text = _typed_text(message).strip()
        if text:
            texts.append(text)
    return texts


def _typed_text(message: Message) -> str:
    """What the user typed in `message` ("" when it is not the user's own words)."""
    if isinstance(message, AttachmentMessage) and message.attachment.type == QUEUED_PROMPT:
        return str(message.attachment.data.get("prompt") or "")
    if _is_user_typed(message):
        assert isinstance(message, UserMessage)
        return _text(message)
    return ""


def _is_user_typed(message: Message) -> bool:
    if not isinstance(message, UserMessage) or message.is_meta or message.is_compact_summary:
        return False
    if isinstance(message.content, str):
        return True
    return not any(isinstance(b, ToolResultBlock) for b in message.content)


def _text(message: UserMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return "".join(b.text for b in message.content if isinstance(b, TextBlock))


def _excerpt(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half:,} characters omitted ...]\n{text[-half:]}"


def user_messages_block(texts: Sequence[str], ctx: RestoreContext) -> str | None:
    """The first message always, then the most recent ones that fit the budget."""
    if not texts:
        return None
    budget = ctx.user_messages_budget_tokens * CHARS_PER_TOKEN
    first = _excerpt(texts[0], ctx.user_message_max_chars)
    chosen: list[str] = []
    used = len(first)
    for text in reversed(texts[1:]):
        item = _excerpt(text, ctx.user_message_max_chars)
        if used + len(item) > budget:
            break
        chosen.append(item)
        used += len(item)
    chosen.reverse()
    skipped = len(texts) - 1 - len(chosen)
    lines = [USER_MESSAGES_HEADER, f"- {first}"]
    if skipped:
        lines.append(f"- [... {skipped} further message(s) omitted; see the summary ...]")
    lines += [f"- {t}" for t in chosen]
    return "\n".join(lines)


def recent_file_paths(messages: Sequence[Message]) -> list[str]:
    """Files the conversation read or wrote, newest first, without duplicates."""
    seen: list[str] = []
    for message in reversed(messages):
        for path in _paths_of(message):
            if path not in seen:
                seen.append(path)
    return seen


def _paths_of(message: Message) -> list[str]:
    if isinstance(message, AttachmentMessage) and message.attachment.type == "file":
        name = message.attachment.data.get("path")
        return [str(name)] if name else []
    if not isinstance(message, AssistantMessage):
        return []
    return [
        str(b.input["file_path"])
        for b in reversed(message.content)
        if isinstance(b, ToolUseBlock) and b.name in FILE_TOOLS and b.input.get("file_path")
    ]


def file_attachments(messages: Sequence[Message], ctx: RestoreContext) -> list[Message]:
    """`file` attachments of recently used files, read fresh, within the token budgets."""
    paths = list(ctx.recent_files) if ctx.recent_files is not None else recent_file_paths(messages)
    # Ask for a few more than needed: deleted or binary files are skipped by the reader.
    contents = ctx.read_files(paths[: ctx.max_files * 3])
    out: list[Message] = []
    left = ctx.file_budget_tokens * CHARS_PER_TOKEN
    for path in paths[: ctx.max_files * 3]:
        text = contents.get(path)
        if text is None:
            continue
        limit = min(ctx.per_file_max_tokens * CHARS_PER_TOKEN, left)
        if limit <= 0 or len(out) >= ctx.max_files:
            break
        body = text[:limit]
        out.append(attachment_message("file", path=path, content=body, truncated=len(text) > limit))
        left -= len(body)
    return out


def latest_todos(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The todo list of the last TodoWrite call or todo attachment."""
    for message in reversed(messages):
        if isinstance(message, AttachmentMessage) and message.attachment.type == "todo":
            return [dict(t) for t in message.attachment.data.get("todos", ())]
        if isinstance(message, AssistantMessage):
            for block in reversed(message.content):
                if isinstance(block, ToolUseBlock) and block.name == "TodoWrite":
                    return [dict(t) for t in block.input.get("todos", ())]
    return []


def todo_attachment(messages: Sequence[Message], ctx: RestoreContext) -> Message | None:
    """A `todo` attachment, or None when there is no todo list."""
    todos = [dict(t) for t in ctx.todos] if ctx.todos is not None else latest_todos(messages)
    if not todos:
        return None
    # `content` is what the generic attachment renderer shows; `todos` is for programs.
    text = "The current todo list (kept across the summary):\n" + json.dumps(todos)
    return attachment_message("todo", todos=todos, content=text)


def preserved_tail(
    messages: Sequence[Message], budget_tokens: int, min_rounds: int = 0
) -> list[Message]:
    """Copies of the most recent complete rounds that fit `budget_tokens`, and at least the
    last `min_rounds` rounds (fresh uuids, no usage, so token accounting restarts from the
    new history).

    A message held twice (the same uuid: a retried append, a caller's history) is kept once,
    at its first place: fresh uuids would otherwise turn the two into two distinct messages
    the session and its transcript keep for good."""
    starts = [s for s in round_starts(messages) if s >= head_end(messages)]
    chosen = len(messages)
    for start in reversed(starts):
        if estimate_tokens(messages[start:]) > budget_tokens:
            break
        chosen = start
    if min_rounds > 0 and starts:
        chosen = min(chosen, starts[-min(min_rounds, len(starts))])
    seen: set[str] = set()
    tail: list[Message] = []
    for message in messages[chosen:]:
        if message.uuid not in seen:
            seen.add(message.uuid)
            tail.append(_fresh_copy(message))
    return tail


def _fresh_copy(message: Message) -> Message:
    if isinstance(message, AssistantMessage):
        return replace(message, uuid=new_uuid(), usage=None)
    return replace(message, uuid=new_uuid())


def user_messages_message(texts: Sequence[str], ctx: RestoreContext) -> Message | None:
    """The meta user message that carries the user's own words across the compaction."""
    block = user_messages_block(texts, ctx)
    return meta_user_message(block) if block else None


def restored_tokens_bound(messages: Sequence[Message], ctx: RestoreContext) -> int:
    """At most how many tokens a compaction of `messages` puts back besides the summary (the
    verbatim tail, the user's messages, files, the todo list), without reading any file:
    what a cost-aware policy counts as written to the cache again."""
    tail = ctx.tail_budget(estimate_tokens(messages))
    if ctx.min_tail_rounds > 0:
        starts = [s for s in round_starts(messages) if s >= head_end(messages)]
        if starts:
            at = starts[-min(ctx.min_tail_rounds, len(starts))]
            tail = max(tail, estimate_tokens(messages[at:]))
    texts = user_texts(messages)
    first = estimate_text_tokens(texts[0][: ctx.user_message_max_chars]) if texts else 0
    users = min(estimate_text_tokens("".join(texts)), first + ctx.user_messages_budget_tokens)
    paths = list(ctx.recent_files) if ctx.recent_files is not None else recent_file_paths(messages)
    files = min(ctx.file_budget_tokens, ctx.per_file_max_tokens * min(ctx.max_files, len(paths)))
    todos = ctx.todos if ctx.todos is not None else latest_todos(messages)
    listed = [dict(t) for t in todos]
    return tail + users + files + (estimate_text_tokens(json.dumps(listed)) if listed else 0)
