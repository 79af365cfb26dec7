"""The append-only JSONL transcript writer.

One JSON object per line, each with a `record` kind:

- `message`: `{"record": "message", "session_id", "parent_uuid", "message": {...}}` where
  `message` is `queryloop.messages.message_to_dict(...)`. A record may carry `"repair": true`
  when the loader synthesised it (see `repair.py`), or `"partial": true` for a draft: an
  assistant message as far as it was known when a tool call it holds started
  (`queryloop.loop.MessageDraft`). A later record with the same uuid supersedes a draft; a
  draft with no later record (a kill while the tool ran) is the message as far as it got.
- `meta`: `{"record": "meta", "session_id", "timestamp", ...}` facts about the session
  (model, cwd, title, format version); later values win.
- `usage`: `{"record": "usage", "session_id", "timestamp", "kind", "model", "usage",
  "cost_usd"}`, one per billed request; `kind` is main, compact, side or interrupted
  (`queryloop.session.RequestKind`; records written before it existed have none: main). A
  side request may add its `"purpose"` (a tool-use summary); `"estimated": true` marks
  output tokens estimated from what streamed (an interrupted response never counted).
- `result`: `{"record": "result", "session_id", "timestamp", "terminal", "turns", ...}`, one
  per prompt: its terminal reason and its turns (docs/loop.md, "Turns").
- `timing`: `{"record": "timing", "session_id", "event", "t", ...}` when requests, tool calls,
  transitions and terminals happened (see `timing.py`); written by `TimingRecorder`.

Records go to a `SessionStore` (`store_api.py`) through a `TranscriptRef`: `append` returns
once the store holds the record, so it is there before the loop takes its next step. The
JSONL store writes each record with one `write()` on an `O_APPEND` descriptor (fsynced before
it returns, or at `sync()` for the live session), so a kill at any moment loses at most the
record being written (which the reader then skips as a truncated last line); SQLite commits
each one. The reference system batches its writes and loses the last turns when killed; this
is the fix, and it costs one fsync per message (see bench) or one per prompt.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..messages.serialization import message_to_dict
from ..messages.types import Message, now_iso
from ..messages.usage import Usage
from .store import SessionError
from .stores import TranscriptRef, close_store

FORMAT_VERSION = 1
TIMING_RECORD = "timing"
_UNSET: Any = object()


class Transcript:
    """An open, append-only session transcript: a `TranscriptRef` (a store and a key), or
    a `.jsonl` file's path (a JSONL store of its own, fsynced per record unless `fsync` is
    False).

    `append(message)` chains `parent_uuid` to the previously appended message unless one is
    given. Safe to use as a context manager; `close()` is idempotent.
    """

    def __init__(
        self,
        target: Path | str | TranscriptRef,
        session_id: str | None = None,
        *,
        fsync: bool = True,
    ):
        self.ref = (
            target
            if isinstance(target, TranscriptRef)
            else TranscriptRef.for_file(target, fsync=fsync)
        )
        self._owns_store = not isinstance(target, TranscriptRef)
        self.session_id = session_id or self.ref.session_id
        self.last_uuid: str | None = None
        self._draft_parents: dict[str, str | None] = {}
        """Draft uuid -> its parent: the record that supersedes a draft keeps its parent."""

    @property
    def path(self) -> Path:
        """The transcript's file; a `SessionError` when its store keeps no files (use
        `location` to tell a person where it is)."""
        path = self.ref.path
        if path is None:
            raise SessionError(f"the transcript is not a file: it is in {self.ref.location}")
        return path

    @property
    def location(self) -> str:
        """Where the transcript is, for a person (a file path, or a store and session id)."""
        return self.ref.location

    def append_record(self, record: Mapping[str, Any]) -> None:
        """Write one record and make it durable (in the store) before returning."""
        self.ref.append([dict(record)])

    def append(
        self,
        message: Message,
        parent_uuid: str | None = _UNSET,
        *,
        repair: bool = False,
        partial: bool = False,
    ) -> None:
        """Persist one message. `parent_uuid` defaults to the last message appended (for the
        message that supersedes a draft: the draft's parent). `partial` writes a draft."""
        parent = self.last_uuid if parent_uuid is _UNSET else parent_uuid
        if parent_uuid is _UNSET and message.uuid in self._draft_parents:
            parent = self._draft_parents[message.uuid]
        if partial:
            self._draft_parents.setdefault(message.uuid, parent)
        else:
            self._draft_parents.pop(message.uuid, None)
        record: dict[str, Any] = {
            "record": "message",
            "session_id": self.session_id,
            "parent_uuid": parent,
            "message": message_to_dict(message),
        }
        if repair:
            record["repair"] = True
        if partial:
            record["partial"] = True
        self.append_record(record)
        self.last_uuid = message.uuid

    def append_meta(self, **fields: Any) -> None:
        """Record facts about the session (model, cwd, title, ...); later values win."""
        record = {"record": "meta", "session_id": self.session_id, "timestamp": now_iso()}
        record.update(fields)
        self.append_record(record)

    def append_usage(
        self,
        usage: Usage,
        *,
        cost_usd: float,
        model: str = "",
        kind: str = "main",
        purpose: str = "",
        estimated: bool = False,
    ) -> None:
        """Record one billed request's token usage, its cost in US dollars and its kind
        (`queryloop.session.RequestKind`: main, compact, side, interrupted). A side request
        may name its `purpose` (a tool-use summary); it counts in the cost, not as a turn.
        `estimated` marks output tokens that are an estimate (an interrupted stream)."""
        record: dict[str, Any] = {
            "record": "usage",
            "session_id": self.session_id,
            "timestamp": now_iso(),
            "kind": kind,
            "model": model,
            "usage": usage.to_dict(),
            "cost_usd": cost_usd,
        }
        if purpose:
            record["purpose"] = purpose
        if estimated:
            record["estimated"] = True
        self.append_record(record)

    def append_result(self, *, terminal: str, turns: int, **fields: Any) -> None:
        """Record the end of one prompt: why it ended and how many turns it ran."""
        record: dict[str, Any] = {
            "record": "result",
            "session_id": self.session_id,
            "timestamp": now_iso(),
            "terminal": terminal,
            "turns": turns,
        }
        record.update({k: v for k, v in fields.items() if v is not None})
        self.append_record(record)

    def start(self, *, model: str = "", cwd: str = "", **fields: Any) -> None:
        """Write the opening meta record (format version, model, cwd)."""
        self.append_meta(format=FORMAT_VERSION, model=model, cwd=cwd, **fields)

    def sync(self) -> None:
        """Durable across an OS crash, not only a process kill (the JSONL store fsyncs, the
        SQLite store checkpoints its WAL).

        Without it every record is still in the store at once (a kill -9 loses nothing
        written); callers sync at natural points such as the end of a prompt.
        """
        self.ref.sync()

    def close(self) -> None:
        """Let go of the descriptor or connection held for it (records are already in the
        store); a store this transcript opened itself (from a path) is closed."""
        self.ref.release()
        if self._owns_store:
            close_store(self.ref.store)

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        # A forgotten close must not leak descriptors in long-lived hosts.
        if self._owns_store:
            try:
                self.close()
            except (OSError, AttributeError):
                pass
