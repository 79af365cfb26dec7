"""Branching a stored session: a fork under a new id, or resuming at an earlier message.

`fork_transcript` copies a session's records to a new session, as the Claude Agent SDK's
`fork_session` does: not a byte copy. Every message gets a fresh uuid (the parent chain and
tombstone targets remapped with it), every record the new session id, and a `meta` record
says where it came from (`forked_from: {session_id, message_uuid}`) and gives it a title.
Billing records (`usage`, `result`, `timing`) stay with the original: the fork has spent
nothing yet. Subagent transcripts are not copied (the SDK's fork leaves sidechains out too).
`up_to` cuts the copy after that message (the last record with its uuid).

`truncate_at` is `resume_session_at`: the messages after the given one are voided by
tombstones appended to the transcript (reason `rewind`, as `queryloop rewind` writes), so
the session continues from that message now and after any later load.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..messages.constructors import tombstone
from ..messages.types import TombstoneReason, now_iso
from .repair import load_transcript
from .store import SessionError, SessionNotFoundError
from .store_api import SessionStoreEntry
from .stores import TranscriptRef

BILLING_RECORDS = frozenset({"usage", "result", "timing"})
"""Records a fork leaves with the original session."""
FORK_SUFFIX = " (fork)"


def fork_transcript(
    source: TranscriptRef,
    target: TranscriptRef,
    *,
    up_to: str | None = None,
    title: str | None = None,
) -> int:
    """Copy `source` to `target` (a new session id) with fresh message uuids (see the module
    docstring); returns how many records were written. `SessionNotFoundError` when the
    source is missing; `SessionError` when `up_to` is not one of its messages or the
    target exists."""
    entries = source.store.load(source.key)
    if entries is None:
        raise SessionNotFoundError(f"no session {source.session_id!r} to fork")
    if target.exists():
        raise SessionError(f"session {target.session_id!r} exists already; fork to a new id")
    kept = _cut(entries, up_to, source.session_id) if up_to else entries
    kept = [e for e in kept if e.get("record") not in BILLING_RECORDS]
    fresh: dict[str, str] = {}

    def mapped(old: object) -> str | None:
        if not isinstance(old, str):
            return None
        return fresh.setdefault(old, str(uuid.uuid4()))

    copied = [_remapped(e, target.session_id, mapped) for e in kept]
    if not any(e.get("record") == "message" for e in copied):
        raise SessionError(f"session {source.session_id!r} has no messages to fork")
    origin = {"session_id": source.session_id, "message_uuid": up_to}
    name = (title or "").strip() or f"{_title(entries) or 'Forked session'}{FORK_SUFFIX}"
    copied.append(
        {
            "record": "meta",
            "session_id": target.session_id,
            "timestamp": now_iso(),
            "forked_from": origin,
            "title": name,
        }
    )
    target.append(copied)
    target.sync()
    return len(copied)


def truncate_at(ref: TranscriptRef, message_uuid: str) -> int:
    """Void every message after `message_uuid` in the session's current conversation;
    returns how many. `SessionError` when it holds no such message (or it lies before the
    last compaction, which summarised it away)."""
    loaded = load_transcript(ref)
    index = next((i for i, m in enumerate(loaded.messages) if m.uuid == message_uuid), None)
    if index is None:
        raise SessionError(
            f"session {loaded.session_id!r} has no message {message_uuid!r} to resume at "
            "(or it lies before the last compaction)"
        )
    removed = loaded.messages[index + 1 :]
    if removed:
        writer = loaded.open_transcript()
        for message in removed:
            writer.append(tombstone(message.uuid, TombstoneReason.REWIND))
        writer.sync()
    return len(removed)


def _cut(entries: list[SessionStoreEntry], up_to: str, session_id: str) -> list[SessionStoreEntry]:
    last = None
    for index, entry in enumerate(entries):
        message = entry.get("message")
        if entry.get("record") == "message" and isinstance(message, dict):
            if message.get("uuid") == up_to:
                last = index
    if last is None:
        raise SessionError(f"session {session_id!r} has no message {up_to!r} to fork at")
    return entries[: last + 1]


def _remapped(entry: SessionStoreEntry, session_id: str, mapped: Any) -> SessionStoreEntry:
    out = dict(entry)
    if "session_id" in out:
        out["session_id"] = session_id
    if out.get("record") != "message" or not isinstance(out.get("message"), dict):
        return out
    message = dict(out["message"])
    message["uuid"] = mapped(message.get("uuid"))
    if "target_uuid" in message:  # a tombstone voids the copy of its target
        message["target_uuid"] = mapped(message["target_uuid"])
    out["message"] = message
    out["parent_uuid"] = mapped(out.get("parent_uuid"))
    return out


def _title(entries: list[SessionStoreEntry]) -> str | None:
    """The session's title (a `meta` title), else its first prompt."""
    titles = [e["title"] for e in entries if e.get("record") == "meta" and e.get("title")]
    if titles:
        return str(titles[-1])
    for entry in entries:
        message = entry.get("message")
        if entry.get("record") != "message" or not isinstance(message, dict):
            continue
        if message.get("type") == "user" and not message.get("is_meta"):
            content = message.get("content")
            if isinstance(content, str) and content.strip():
                return " ".join(content.split())[:80]
            if isinstance(content, list):
                texts = [b.get("text", "") for b in content if isinstance(b, dict)]
                if any(b.get("type") == "tool_result" for b in content if isinstance(b, dict)):
                    continue
                text = " ".join(" ".join(texts).split())
                if text:
                    return text[:80]
    return None
