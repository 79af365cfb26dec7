"""The session report: one self-contained HTML page built from a transcript alone.

    from queryloop.report import write_report
    page = write_report(transcript_path)            # <session-id>.html beside the transcript

Charts (plotly.js, inlined so the page works offline): context size of every request against
the window and the autocompact threshold with compactions marked; tokens per request split
into cache read, cache write, uncached input and output, with the cumulative cost; a timeline
of the model's stream and every tool call, with transitions, terminals and recovery events on
the same axis, and subagents as nested lanes. `queryloop report [SESSION]`, `/report` in the
REPL and `Agent.report()` call `write_report`.
"""

from __future__ import annotations

from pathlib import Path

from ..session.stores import TranscriptRef, session_folder
from .model import SessionTimeline
from .reader import read_timeline

__all__ = ["SessionTimeline", "read_timeline", "report_path", "write_report"]


def report_path(transcript: Path | TranscriptRef, home: Path | None = None) -> Path:
    """Where a report goes by default: beside the transcript, `<session-id>.html` (for a
    session in a database, where its JSONL file would be: beside its session folder)."""
    if isinstance(transcript, Path):
        return transcript.with_suffix(".html")
    folder = session_folder(transcript, home)
    return folder.with_name(f"{folder.name}.html")


def write_report(transcript: Path | str | TranscriptRef, out: Path | str | None = None) -> Path:
    """Write the report of the session in `transcript` (in a store, or a `.jsonl` file) to
    `out` and return its path."""
    from .page import render_page

    source = transcript if isinstance(transcript, TranscriptRef) else Path(transcript)
    target = Path(out) if out is not None else report_path(source)
    page = render_page(read_timeline(source))
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(page, encoding="utf-8")
    tmp.replace(target)
    return target
