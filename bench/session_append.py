"""Cost of one durable transcript append (write + fsync) vs. without fsync."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from queryloop.messages import assistant_message
from queryloop.session import Transcript

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


if __name__ == "__main__":
    print(f"transcript append with fsync:    {per_append_us(True):8.1f} µs/message")
    print(f"transcript append without fsync: {per_append_us(False):8.1f} µs/message")
