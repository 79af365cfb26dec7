"""Summaries of a project's sessions for `queryloop sessions` and `/resume`, read through the
session store (the JSONL files unless another is given)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .store import project_key
from .store_api import SessionStore, SessionStoreEntry
from .stores import TranscriptRef, open_session_store

_PROMPT_CHARS = 80


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One session: id, last write time, its first prompt, prompts, turns, cost so far.

    `prompts` counts the prompts a person (or `-p`) gave; `turns` counts the turns those
    prompts ran (docs/loop.md, "Turns": the figure `--max-turns` limits and `RunResult.turns`
    reports), summed from the transcript's `result` records.
    """

    id: str
    modified: datetime
    first_prompt: str
    turns: int
    cost_usd: float
    path: Path | None
    """The transcript's file (JSONL store); None in a database."""
    prompts: int = 0
    location: str = ""
    """Where the transcript is, for a person: its file, or the store and session id."""


def list_sessions(
    cwd: Path | str, home: Path | str | None = None, *, store: SessionStore | None = None
) -> list[SessionSummary]:
    """The sessions of the project at `cwd` in `store` (default: the JSONL files under
    `home`), newest first. Unreadable records are ignored."""
    store = store if store is not None else open_session_store(None, home=home)
    project = project_key(cwd)
    found = []
    for entry in store.list_sessions(project):
        ref = TranscriptRef.of(store, project, entry["session_id"])
        records = store.load(ref.key) or []
        modified = datetime.fromtimestamp(entry["mtime"] / 1000, UTC)
        found.append(summarize(records, ref, modified))
    return found


def summarize(
    records: list[SessionStoreEntry], ref: TranscriptRef, modified: datetime
) -> SessionSummary:
    """Scan one transcript cheaply (JSON only, no message decoding).

    Transcripts written before `result` records existed count one turn per main-loop
    response and one prompt per prompt message (not the copies a compaction keeps)."""
    first_prompt = ""
    prompts = turns = 0
    legacy_prompts = legacy_turns = 0
    cost = 0.0
    session_id = ref.session_id
    boundary_at = ""
    for record in records:
        kind = record.get("record")
        if kind == "usage":
            cost += float(record.get("cost_usd") or 0.0)
            legacy_turns += record.get("kind", "main") == "main"
        elif kind == "result":
            prompts += 1
            turns += int(record.get("turns") or 0)
        elif kind == "message":
            message = record.get("message")
            if isinstance(message, dict) and _is_boundary(message):
                boundary_at = str(message.get("timestamp") or "")
                continue
            prompt = _prompt_text(message)
            if prompt is not None:
                first_prompt = first_prompt or prompt
                # The kept tail after a boundary repeats earlier prompts (fresh copies that
                # keep their original time).
                stamp = message.get("timestamp") if isinstance(message, dict) else None
                legacy_prompts += str(stamp or "") >= boundary_at
    if not prompts:
        prompts, turns = legacy_prompts, legacy_turns
    return SessionSummary(
        session_id,
        modified,
        _one_line(first_prompt),
        turns,
        cost,
        ref.path,
        prompts=prompts,
        location=ref.location,
    )


def _is_boundary(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and message.get("type") == "system"
        and message.get("subtype") == "compact_boundary"
    )


def _prompt_text(message: Any) -> str | None:
    """The text of a user prompt (not meta, not a tool result), else None."""
    if not isinstance(message, dict) or message.get("type") != "user":
        return None
    if message.get("is_meta") or message.get("is_compact_summary"):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list) or not content:
        return None
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return None
    return " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _PROMPT_CHARS else flat[: _PROMPT_CHARS - 1] + "…"
