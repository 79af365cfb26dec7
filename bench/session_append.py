"""Cost of one durable transcript append: JSONL with and without fsync, and SQLite (a
committed transaction in WAL mode, `synchronous=NORMAL`: docs/sessions.md, "Durability")."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from queryloop.messages import assistant_message
from queryloop.session import SqliteSessionStore, Transcript, TranscriptRef

N = 300


def per_append_us(fsync: bool) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        message = assistant_message("word " * 200)  # ~1 KB of text, a typical message
        with Transcript(Path(tmp) / "s.jsonl", fsync=fsync) as writer:
            writer.append(message)  # open + create outside the timing
            start = time.perf_counter()
            for _ in range(N):
                writer.append(message)
            return (time.perf_counter() - start) / N * 1e6


def sqlite_per_append_us() -> float:
    with tempfile.TemporaryDirectory() as tmp:
        message = assistant_message("word " * 200)
        store = SqliteSessionStore(Path(tmp) / "sessions.db")
        writer = Transcript(TranscriptRef.of(store, "-bench", "s"))
        writer.append(message)
        start = time.perf_counter()
        for _ in range(N):
            writer.append(message)
        elapsed = (time.perf_counter() - start) / N * 1e6
        store.close()
        return elapsed


if __name__ == "__main__":
    print(f"transcript append with fsync:    {per_append_us(True):8.1f} µs/message")
    print(f"transcript append without fsync: {per_append_us(False):8.1f} µs/message")
    print(f"sqlite append (one commit):      {sqlite_per_append_us():8.1f} µs/message")
