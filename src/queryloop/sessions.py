"""Stored sessions as data: list, read, fork, truncate, rename, tag and delete them.

The Claude Agent SDK's session functions, with its names, arguments and result types
(`queryloop.claude_agent_sdk` exports the same objects), over any session store:

    from queryloop.sessions import list_sessions, get_session_messages, fork_session

    for info in list_sessions(directory="/work/proj", limit=10):
        print(info.session_id, info.summary)
    messages = get_session_messages(info.session_id, directory="/work/proj")
    fork = fork_session(info.session_id, up_to_message_id=messages[3].uuid)
    agent = Agent.resume(fork.session_id)

`directory` is the project folder (its sessions; None: every project, or the session is
looked for in every project). `session_store` is where they are: one of queryloop's stores,
an SDK-shaped async store (`session.async_store`), or a spec (`sqlite:///...`,
`postgresql://...`); None: the configured store (`QUERYLOOP_SESSION_STORE`, the settings'
`sessionStore`, else the JSONL files under `$QUERYLOOP_HOME`).

Differences from the SDK (docs/sessions.md): `include_worktrees` is accepted and ignored
(sessions are listed for the folder given); `git_branch` is None; the functions are
synchronous (they read a local file or make one database round trip per session).
"""

from __future__ import annotations

import uuid as uuid_mod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from .config.session_store import open_configured_store
from .messages.serialization import message_to_dict
from .messages.types import AssistantMessage, UserMessage, now_iso
from .session.async_store import as_session_store
from .session.branching import fork_transcript, truncate_at
from .session.listing import summarize
from .session.repair import load_transcript
from .session.store import SessionError, SessionNotFoundError, project_key, queryloop_home
from .session.store_api import SessionStore, SessionStoreEntry
from .session.stores import TranscriptRef, close_store, project_keys

SessionStoreArg = SessionStore | str | Path | Any | None
"""A `session_store` argument: a store (queryloop's or an SDK-shaped async one), a spec, or
None for the configured store."""


@dataclass
class SDKSessionInfo:
    """One session, as `list_sessions` reports it (the SDK's fields)."""

    session_id: str
    summary: str
    """Its title if it has one, else its first prompt."""
    last_modified: int
    """When it was last written, in milliseconds since the epoch."""
    file_size: int | None = None
    """The transcript file's size in bytes (JSONL store; None in a database)."""
    custom_title: str | None = None
    first_prompt: str | None = None
    git_branch: str | None = None
    cwd: str | None = None
    tag: str | None = None
    created_at: int | None = None
    """When its first record was written, in milliseconds since the epoch."""


@dataclass
class SessionMessage:
    """A user or assistant message of a session (`get_session_messages`)."""

    type: Literal["user", "assistant"]
    uuid: str
    session_id: str
    message: Any
    """The API's shape: `{"role", "content"}` (and `model`, `id`, `stop_reason`)."""
    parent_tool_use_id: str | None = None
    parent_agent_id: str | None = None


@dataclass
class ForkSessionResult:
    """The result of `fork_session`."""

    session_id: str
    """The new session's id."""


def list_sessions(
    directory: str | Path | None = None,
    limit: int | None = None,
    offset: int = 0,
    include_worktrees: bool = True,
    *,
    session_store: SessionStoreArg = None,
) -> list[SDKSessionInfo]:
    """The sessions of the project at `directory` (None: of every project the store can
    list), newest first; `offset` and `limit` page through them."""
    with _store(session_store, directory) as store:
        projects = [project_key(directory)] if directory else project_keys(store, None)
        listed = [(p, e) for p in projects for e in store.list_sessions(p)]
        listed.sort(key=lambda pe: pe[1]["mtime"], reverse=True)
        end = None if limit is None else offset + limit
        return [
            _info(TranscriptRef.of(store, p, e["session_id"]), e["mtime"])
            for p, e in listed[offset:end]
        ]


def get_session_info(
    session_id: str, directory: str | Path | None = None, *, session_store: SessionStoreArg = None
) -> SDKSessionInfo | None:
    """One session's `SDKSessionInfo`; None when there is no such session."""
    with _store(session_store, directory) as store:
        found = _find(store, session_id, directory)
        if found is None:
            return None
        ref, mtime = found
        return _info(ref, mtime)


def get_session_messages(
    session_id: str,
    directory: str | Path | None = None,
    limit: int | None = None,
    offset: int = 0,
    *,
    session_store: SessionStoreArg = None,
) -> list[SessionMessage]:
    """The session's conversation as it would be resumed (from the last compaction, voided
    messages left out): its user and assistant messages, meta messages left out, in order.
    Empty when there is no such session. Nothing is written (no repair is persisted)."""
    with _store(session_store, directory) as store:
        found = _find(store, session_id, directory)
        if found is None:
            return []
        loaded = load_transcript(found[0], repair=False)
    out = [
        SessionMessage(
            type="user" if isinstance(m, UserMessage) else "assistant",
            uuid=m.uuid,
            session_id=loaded.session_id,
            message=_api_message(message_to_dict(m)),
        )
        for m in loaded.messages
        if isinstance(m, UserMessage | AssistantMessage) and not m.is_meta
    ]
    end = None if limit is None else offset + limit
    return out[offset:end]


def fork_session(
    session_id: str,
    directory: str | Path | None = None,
    up_to_message_id: str | None = None,
    title: str | None = None,
    *,
    session_store: SessionStoreArg = None,
) -> ForkSessionResult:
    """Copy a session (up to and including `up_to_message_id`) into a new session with
    fresh message uuids (`session.branching`); resume the fork with `Agent.resume`.
    `FileNotFoundError` when there is no such session (the SDK's), `ValueError` when
    `up_to_message_id` is not one of its messages."""
    with _store(session_store, directory) as store:
        source = _require(store, session_id, directory)
        target = TranscriptRef.of(store, source.project_key, str(uuid_mod.uuid4()))
        try:
            fork_transcript(source, target, up_to=up_to_message_id, title=title)
        except SessionNotFoundError as exc:
            raise FileNotFoundError(str(exc)) from None
        except SessionError as exc:
            raise ValueError(str(exc)) from None
        return ForkSessionResult(session_id=target.session_id)


def resume_session_at(
    session_id: str,
    message_id: str,
    directory: str | Path | None = None,
    *,
    session_store: SessionStoreArg = None,
) -> int:
    """Make the session continue from `message_id`: the messages after it are voided in
    its transcript (tombstones, as `queryloop rewind` writes); returns how many. The next
    `Agent.resume(session_id)` (or `Agent.resume(session_id, at=message_id)`, which does
    both) goes on from there. Fork first (`fork_session(..., up_to_message_id=...)`) to keep
    the original whole."""
    with _store(session_store, directory) as store:
        return truncate_at(_require(store, session_id, directory), message_id)


def delete_session(
    session_id: str, directory: str | Path | None = None, *, session_store: SessionStoreArg = None
) -> None:
    """Delete a session and its subagent transcripts (with the JSONL files, its folder too).
    `FileNotFoundError` when there is no such session."""
    with _store(session_store, directory) as store:
        ref = _require(store, session_id, directory)
        store.delete(ref.key)


def rename_session(
    session_id: str,
    title: str,
    directory: str | Path | None = None,
    *,
    session_store: SessionStoreArg = None,
) -> None:
    """Give the session a title (a `meta` record; the last one wins)."""
    if not title.strip():
        raise ValueError("the title is empty")
    _append_meta(session_id, directory, session_store, title=title.strip())


def tag_session(
    session_id: str,
    tag: str | None,
    directory: str | Path | None = None,
    *,
    session_store: SessionStoreArg = None,
) -> None:
    """Tag the session (a `meta` record; None clears the tag)."""
    _append_meta(session_id, directory, session_store, tag=(tag or "").strip())


# ---- internals ------------------------------------------------------------------------


@contextmanager
def _store(choice: SessionStoreArg, directory: str | Path | None) -> Iterator[SessionStore]:
    """The store to use, closed afterwards when it was opened here."""
    if choice is not None and not isinstance(choice, str | Path):
        choice = as_session_store(choice)
    cwd = Path(directory).expanduser().resolve() if directory else Path.cwd()
    store, opened = open_configured_store(choice, cwd, queryloop_home())
    try:
        yield store
    finally:
        if opened:
            close_store(store)


def _find(
    store: SessionStore, session_id: str, directory: str | Path | None
) -> tuple[TranscriptRef, int] | None:
    """The session (an exact id) and its last write time, in the project or any project."""
    projects = [project_key(directory)] if directory else project_keys(store, Path.cwd())
    for project in projects:
        for entry in store.list_sessions(project):
            if entry["session_id"] == session_id:
                return TranscriptRef.of(store, project, session_id), entry["mtime"]
    return None


def _require(store: SessionStore, session_id: str, directory: str | Path | None) -> TranscriptRef:
    found = _find(store, session_id, directory)
    if found is None:
        where = f" in the project at {directory}" if directory else ""
        raise FileNotFoundError(f"Session {session_id} not found{where}")
    return found[0]


def _append_meta(
    session_id: str, directory: str | Path | None, choice: SessionStoreArg, **fields: str
) -> None:
    with _store(choice, directory) as store:
        ref = _require(store, session_id, directory)
        record = {"record": "meta", "session_id": session_id, "timestamp": now_iso(), **fields}
        ref.append([record])
        ref.sync()


def _info(ref: TranscriptRef, mtime: int) -> SDKSessionInfo:
    records = ref.store.load(ref.key) or []
    modified = datetime.fromtimestamp(mtime / 1000).astimezone()
    summary = summarize(records, ref, modified)
    meta = _meta(records)
    title = str(meta["title"]) if meta.get("title") else None
    tag = str(meta["tag"]) if meta.get("tag") else None
    size = None
    if ref.path is not None:
        try:
            size = ref.path.stat().st_size
        except OSError:
            size = None
    return SDKSessionInfo(
        session_id=ref.session_id,
        summary=title or summary.first_prompt,
        last_modified=mtime,
        file_size=size,
        custom_title=title,
        first_prompt=summary.first_prompt or None,
        cwd=str(meta["cwd"]) if meta.get("cwd") else None,
        tag=tag,
        created_at=_created(records),
    )


def _meta(records: list[SessionStoreEntry]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for record in records:
        if record.get("record") == "meta":
            meta.update(record)
    return meta


def _created(records: list[SessionStoreEntry]) -> int | None:
    for record in records:
        stamp = record.get("timestamp")
        if stamp is None and isinstance(record.get("message"), dict):
            stamp = record["message"].get("timestamp")
        if isinstance(stamp, str):
            try:
                return int(datetime.fromisoformat(stamp).timestamp() * 1000)
            except ValueError:
                continue
    return None


def _api_message(data: dict[str, Any]) -> dict[str, Any]:
    """An internal message's dict in the API's shape."""
    out: dict[str, Any] = {"role": data["type"], "content": data.get("content")}
    if data["type"] == "assistant":
        out.update(model=data.get("model"), id=data.get("message_id"))
        out["stop_reason"] = data.get("stop_reason")
    return out


__all__ = [
    "ForkSessionResult",
    "SDKSessionInfo",
    "SessionMessage",
    "delete_session",
    "fork_session",
    "get_session_info",
    "get_session_messages",
    "list_sessions",
    "rename_session",
    "resume_session_at",
    "tag_session",
]
