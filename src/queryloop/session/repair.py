"""Load a transcript tolerantly and repair what a crash leaves behind.

What a kill can leave, and what loading does about it:

- a truncated or garbled line (the record in flight): skipped and reported;
- a record kind this version does not know: skipped (newer writers may add kinds);
- a message written twice (a retried append): the later copy is dropped by uuid;
- a draft (`"partial": true`, an assistant message written before a tool call it holds
  started): the later record with its uuid takes its place; with none (killed while the tool
  ran) the draft is the message, and its unanswered call is repaired like any other;
- a tool_use whose tool_result never arrived (killed during the tool call): a stand-in
  `is_error` tool_result (`Interruption.RESUMED`) is inserted right after the assistant
  message and ALSO appended to the transcript (with `"repair": true` and the assistant
  message as its parent) so it stays consistent and a second load finds nothing to repair.

Everything is read through the session's store (`TranscriptRef`); a path names a JSONL file.

The array is rebuilt from the last compact boundary onward (everything before it is summarised
after it) and tombstoned messages are removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..messages.blocks import ToolResultBlock, ToolUseBlock
from ..messages.constructors import interrupted_result
from ..messages.interruption import Interruption
from ..messages.serialization import MessageDecodeError, message_from_dict
from ..messages.types import (
    AssistantMessage,
    Message,
    SystemMessage,
    SystemSubtype,
    TombstoneMessage,
    UserMessage,
)
from ..messages.usage import Usage
from .files import FILES_RECORD, SeenFile, read_entries
from .store import SessionNotFoundError
from .store_api import SessionStoreEntry
from .stores import TranscriptRef, as_ref
from .transcript import TIMING_RECORD, Transcript

INTERRUPTED_TOOL_RESULT = Interruption.RESUMED.text()
"""The text of the loader's stand-in results (kept for callers; `Interruption.RESUMED`)."""


@dataclass(frozen=True, slots=True)
class LoadedSession:
    """A transcript read back: the message array to continue from and what was found.

    `messages` starts at the last compact boundary, has tombstones applied and orphan
    tool_uses repaired. `problems` lists, in words, everything skipped or repaired.
    `last_uuid` is the last message written to the transcript (the parent of the next
    append). `ref` is where it was read from (its store and key); `path` its file, for the
    JSONL store.
    """

    messages: list[Message]
    session_id: str
    metadata: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    path: Path | None = None
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    responses: int = 0
    """Main-loop model responses (usage records of kind main)."""
    requests: int = 0
    """Billed requests of every kind (all usage records)."""
    repaired: tuple[Message, ...] = ()
    last_uuid: str | None = None
    turns: int = 0
    """Turns of every prompt so far (docs/loop.md, "Turns")."""
    prompts: int = 0
    """Prompts that ran to their end (`result` records)."""
    read_files: dict[str, SeenFile] = field(default_factory=dict)
    """The latest recorded read state per path (`files` records, see `session.files`);
    `restore_read_state` keeps the entries of files unchanged on disk."""
    last_request_at: float | None = None
    """When the session's last main-thread request started (Unix seconds, its `timing`
    record); the `auto` cache lifetime measures the first gap after a resume from it."""
    ref: TranscriptRef | None = None

    @property
    def loaded_tools(self) -> list[str]:
        """The deferred tools ToolSearch had loaded, in load order (the `meta` field
        `loaded_deferred_tools`; see `Session.loaded_tools`)."""
        names = self.metadata.get("loaded_deferred_tools")
        return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []

    def open_transcript(self, *, fsync: bool = True) -> Transcript:
        """A writer that continues this transcript, chaining parents from `last_uuid`
        (`fsync` applies when it was loaded from a path)."""
        if self.ref is None:
            raise SessionNotFoundError("this session was not loaded from a store")
        writer = Transcript(self.ref, self.session_id)
        writer.last_uuid = self.last_uuid
        return writer


@dataclass(slots=True)
class _Entry:
    message: Message
    parent_uuid: str | None
    repair: bool


@dataclass(slots=True)
class _Reader:
    """Accumulates records in file order."""

    session_id: str
    entries: list[_Entry] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    metadata: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    responses: int = 0
    requests: int = 0
    turns: int = 0
    prompts: int = 0
    unknown: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0
    read_files: dict[str, SeenFile] = field(default_factory=dict)
    last_request_at: float | None = None
    drafts: dict[str, int] = field(default_factory=dict)
    """uuid -> index in `entries` of a draft no later record has superseded yet."""

    def feed(self, record: dict[str, Any], lineno: int) -> None:
        kind = record.get("record")
        if kind == "message":
            self._message(record, lineno)
        elif kind == "meta":
            skip = {"record", "session_id", "timestamp"}
            self.metadata.update({k: v for k, v in record.items() if k not in skip})
        elif kind == "usage":
            self.usage = self.usage + Usage.from_dict(record.get("usage"))
            self.cost_usd += float(record.get("cost_usd") or 0.0)
            self.requests += 1
            # Side requests (summaries, ...) are not turns: a kind, or an older `purpose`.
            main = record.get("kind", "main") == "main" and not record.get("purpose")
            self.responses += main
        elif kind == "result":
            self.prompts += 1
            self.turns += int(record.get("turns") or 0)
        elif kind == FILES_RECORD:
            self.read_files.update(read_entries(record))
        elif kind == TIMING_RECORD:
            # For the session report (queryloop.report); the cache lifetime needs the time
            # of the last request of the main thread.
            if record.get("event") == "request_start" and not record.get("agent_id"):
                t = record.get("t")
                self.last_request_at = float(t) if isinstance(t, int | float) else None
        else:
            self.unknown[str(kind)] = self.unknown.get(str(kind), 0) + 1

    def _message(self, record: dict[str, Any], lineno: int) -> None:
        try:
            message = message_from_dict(record["message"])
        except (MessageDecodeError, KeyError, TypeError) as exc:
            self.problems.append(f"line {lineno}: undecodable message skipped ({exc})")
            return
        partial = record.get("partial") is True
        if message.uuid in self.seen:
            self._supersede(message, partial)
            return
        self.seen.add(message.uuid)
        parent = record.get("parent_uuid")
        repair = bool(record.get("repair", False))
        if partial:
            self.drafts[message.uuid] = len(self.entries)
        self.entries.append(_Entry(message, parent if isinstance(parent, str) else None, repair))
        if isinstance(record.get("session_id"), str):
            self.session_id = record["session_id"]

    def _supersede(self, message: Message, partial: bool) -> None:
        """A uuid seen before: a draft is replaced in its place, any other copy dropped."""
        index = self.drafts.pop(message.uuid, None)
        if index is None:
            self.duplicates += 1
            return
        self.entries[index].message = message
        if partial:
            self.drafts[message.uuid] = index

    def summarize_skips(self) -> None:
        if self.duplicates:
            self.problems.append(f"{self.duplicates} duplicate message(s) dropped")
        for kind, count in sorted(self.unknown.items()):
            self.problems.append(f"{count} record(s) of unknown kind {kind!r} skipped")


def feed_entries(entries: list[SessionStoreEntry], reader: _Reader) -> None:
    """Feed every entry of a transcript to `reader`, numbering them from 1 as lines."""
    for index, record in enumerate(entries):
        if not isinstance(record, dict):
            reader.problems.append(f"line {index + 1}: not a JSON object, skipped")
            continue
        reader.feed(record, index + 1)


def order_entries(entries: list[_Entry]) -> list[Message]:
    """File order, except that repair records sit right after the message they repair."""
    repairs: dict[str, list[Message]] = {}
    plain: list[_Entry] = []
    for entry in entries:
        if entry.repair and entry.parent_uuid is not None:
            repairs.setdefault(entry.parent_uuid, []).append(entry.message)
        else:
            plain.append(entry)
    ordered: list[Message] = []
    for entry in plain:
        ordered.append(entry.message)
        ordered.extend(repairs.pop(entry.message.uuid, ()))
    for leftover in repairs.values():
        ordered.extend(leftover)
    return ordered


def from_last_boundary(messages: list[Message]) -> list[Message]:
    """The array from the last compact boundary (inclusive) onward."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, SystemMessage) and message.subtype == SystemSubtype.COMPACT_BOUNDARY:
            return messages[index:]
    return messages


def apply_tombstones(messages: Iterable[Message], all_messages: Iterable[Message]) -> list[Message]:
    """`messages` without tombstones and without the messages any tombstone voids."""
    voided = {m.target_uuid for m in all_messages if isinstance(m, TombstoneMessage)}
    return [m for m in messages if not isinstance(m, TombstoneMessage) and m.uuid not in voided]


def find_orphans(messages: list[Message]) -> list[tuple[int, list[ToolUseBlock]]]:
    """For each assistant run with tool_uses never answered later: (index of the run's last
    message, its orphan tool_uses)."""
    answered: set[str] = set()
    for message in messages:
        if isinstance(message, UserMessage) and not isinstance(message.content, str):
            answered.update(
                b.tool_use_id for b in message.content if isinstance(b, ToolResultBlock)
            )
    found: list[tuple[int, list[ToolUseBlock]]] = []
    pending: list[ToolUseBlock] = []
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            pending.extend(
                b for b in message.content if isinstance(b, ToolUseBlock) and b.id not in answered
            )
            next_is_assistant = index + 1 < len(messages) and isinstance(
                messages[index + 1], AssistantMessage
            )
            if pending and not next_is_assistant:
                found.append((index, pending))
                pending = []
    return found


def repair_orphans(messages: list[Message]) -> tuple[list[Message], list[tuple[str, Message]]]:
    """The array with a synthetic error tool_result after every orphan tool_use run, and the
    inserted messages paired with the uuid of the message each follows."""
    orphans = find_orphans(messages)
    if not orphans:
        return messages, []
    inserted: list[tuple[str, Message]] = []
    out = list(messages)
    for index, uses in reversed(orphans):
        blocks = tuple(interrupted_result(u.id, Interruption.RESUMED, u.name) for u in uses)
        fix = UserMessage(content=blocks, is_meta=True)
        out.insert(index + 1, fix)
        inserted.append((messages[index].uuid, fix))
    inserted.reverse()
    return out, inserted


def load_transcript(source: Path | str | TranscriptRef, *, repair: bool = True) -> LoadedSession:
    """Read a transcript (a `TranscriptRef`, or the path of a `.jsonl` file) and rebuild the
    message array to continue from.

    With `repair` (the default) orphan tool_uses get synthetic error results, which are also
    appended to the transcript. Raises SessionNotFoundError when there is no transcript.
    """
    ref = as_ref(source)
    checked = ref.load_checked()
    if checked is None:
        raise SessionNotFoundError(f"no transcript at {ref.location}")
    entries, problems = checked
    reader = _Reader(
        session_id=ref.session_id if not ref.subpath else ref.subpath.rsplit("/", 1)[-1]
    )
    reader.problems.extend(problems)
    feed_entries(entries, reader)
    reader.summarize_skips()
    everything = order_entries(reader.entries)
    last_uuid = reader.entries[-1].message.uuid if reader.entries else None
    messages = apply_tombstones(from_last_boundary(everything), everything)
    inserted: list[tuple[str, Message]] = []
    if repair:
        messages, inserted = repair_orphans(messages)
    if inserted:
        _persist_repairs(ref, reader.session_id, inserted)
        last_uuid = inserted[-1][1].uuid
        count = sum(len(m.content) for _, m in inserted if isinstance(m, UserMessage))
        reader.problems.append(f"{count} interrupted tool call(s) given an error result")
    return LoadedSession(
        messages=messages,
        session_id=reader.session_id,
        metadata=reader.metadata,
        problems=reader.problems,
        path=ref.path,
        usage=reader.usage,
        cost_usd=reader.cost_usd,
        responses=reader.responses,
        requests=reader.requests,
        # Transcripts written before `result` records existed: one turn per main response.
        turns=reader.turns if reader.prompts else reader.responses,
        prompts=reader.prompts,
        repaired=tuple(m for _, m in inserted),
        last_uuid=last_uuid,
        read_files=reader.read_files,
        last_request_at=reader.last_request_at,
        ref=ref,
    )


def _persist_repairs(
    ref: TranscriptRef, session_id: str, inserted: list[tuple[str, Message]]
) -> None:
    writer = Transcript(ref, session_id)
    for parent_uuid, message in inserted:
        writer.append(message, parent_uuid, repair=True)
    writer.sync()
    if ref.path is not None:
        ref.release()
