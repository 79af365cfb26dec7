"""A real process appending in a loop, killed with SIGKILL: at most the line in flight is lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from queryloop.messages import text_of
from queryloop.session import load_transcript

WRITER = r"""
import sys
from queryloop.messages import user_message
from queryloop.session import Transcript

w = Transcript(sys.argv[1])
i = 0
while True:
    w.append(user_message(f"m{i} " + "x" * 2000))
    print(i, flush=True)
    i += 1
"""


def test_sigkill_while_appending_loses_at_most_the_record_in_flight(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    acknowledged = -1
    for line in proc.stdout:
        acknowledged = int(line)
        if acknowledged >= 50:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    rest = proc.stdout.read().split()
    if rest:
        acknowledged = int(rest[-1])
    proc.stdout.close()
    loaded = load_transcript(path)
    texts = [text_of(m).split()[0] for m in loaded.messages]  # type: ignore[arg-type]
    # Every append that returned is on disk, in order; at most one more (in flight) may be.
    assert texts[: acknowledged + 1] == [f"m{i}" for i in range(acknowledged + 1)]
    assert acknowledged + 1 <= len(texts) <= acknowledged + 2
    assert all("garbled" not in p for p in loaded.problems)
