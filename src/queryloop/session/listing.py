"""Summaries of a project's sessions for `queryloop sessions` and `/resume`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .store import project_dir, transcripts_in

_PROMPT_CHARS = 80


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One session: id, last write time, its first prompt, prompts typed, cost so far.

    `turns` counts the prompts a person (or `-p`) gave, not model requests.
    """

    id: str
    modified: datetime
    first_prompt: str
    turns: int
    cost_usd: float
    path: Path


def list_sessions(cwd: Path | str, home: Path | str | None = None) -> list[SessionSummary]:
    """The sessions of the project at `cwd`, newest first. Unreadable lines are ignored."""
    return [summarize(path) for path in transcripts_in(project_dir(cwd, home))]


def summarize(path: Path) -> SessionSummary:
    """Scan one transcript cheaply (JSON only, no message decoding)."""
    first_prompt = ""
    turns = 0
    cost = 0.0
    session_id = path.stem
    for record in _records(path):
        kind = record.get("record")
        if kind == "usage":
            cost += float(record.get("cost_usd") or 0.0)
        elif kind == "message":
            prompt = _prompt_text(record.get("message"))
            if prompt is not None:
                turns += 1
                first_prompt = first_prompt or prompt
    modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return SessionSummary(session_id, modified, _one_line(first_prompt), turns, cost, path)


def _records(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    with path.open("rb") as handle:
        for line in handle:
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            if isinstance(record, dict):
                out.append(record)
    return out


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
