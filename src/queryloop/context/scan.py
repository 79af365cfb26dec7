"""`attachments_of`: the history's attachments of one kind, in O(new messages) per call.

Stateless providers (deltas, date change, edited files, nested memory) read back what was
already announced from earlier attachments in the history. Scanning the whole history every
turn made each turn cost O(history). This index is a pure cache over that scan: it remembers,
per history, the attachments found so far and the messages scanned (by identity), and
continues from there when the next history starts with exactly those objects. Anything else
(a compaction, an edited or a different history) is scanned from scratch, so the providers'
semantics are exactly those of the full scan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..messages.types import AttachmentMessage, Message

MAX_HISTORIES = 8
"""Histories remembered at once (one per live session or sub-agent, typically)."""


@dataclass(slots=True)
class _Index:
    scanned: list[Message]
    by_kind: dict[str, list[AttachmentMessage]] = field(default_factory=dict)


_INDEXES: dict[int, _Index] = {}


def attachments_of(messages: Sequence[Message], kind: str) -> list[AttachmentMessage]:
    """The attachment messages of type `kind` in `messages`, in order (a fresh list)."""
    if not messages:
        return []
    return list(_index(messages).by_kind.get(kind, ()))


def _index(messages: Sequence[Message]) -> _Index:
    key = id(messages[0])
    index = _INDEXES.get(key)
    if index is None or not _extends(messages, index.scanned):
        index = _Index(scanned=[])
        start = 0
    else:
        start = len(index.scanned)
    for message in messages[start:]:
        if isinstance(message, AttachmentMessage):
            index.by_kind.setdefault(message.attachment.type, []).append(message)
    index.scanned = list(messages)
    _INDEXES.pop(key, None)
    _INDEXES[key] = index  # most recently used last
    while len(_INDEXES) > MAX_HISTORIES:
        del _INDEXES[next(iter(_INDEXES))]
    return index


def _extends(current: Sequence[Message], previous: Sequence[Message]) -> bool:
    # List equality compares by identity first (C speed), then by value: messages are
    # immutable values, so a value-equal prefix holds the same attachments either way.
    n = len(previous)
    return 0 < n <= len(current) and list(current[:n]) == previous
