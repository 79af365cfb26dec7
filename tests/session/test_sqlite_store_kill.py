"""kill -9 loses nothing the SQLite store acknowledged: a writer process is SIGKILLed three
times mid-stream; every append that returned is in the database, in order, and the next
process appends after them (the cheap, store-level twin of tests/cli/test_cli_kill_resume.py;
the CLI's own is tests/cli/test_cli_session_store.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from queryloop.session.sqlite_store import SqliteSessionStore

WRITER = """
import sys
from queryloop.session.sqlite_store import SqliteSessionStore
store = SqliteSessionStore(sys.argv[1])
key = {"project_key": "-p", "session_id": "s"}
n = int(sys.argv[2])
while True:
    store.append(key, [{"record": "message", "n": n, "pad": "x" * 300}])
    print(n, flush=True)  # acknowledged: append returned
    n += 1
"""


def test_every_acknowledged_append_survives_sigkill(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    acknowledged = -1
    for _ in range(3):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db), str(acknowledged + 1)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdout is not None
        for _ in range(150):  # kill while it is writing
            acknowledged = int(proc.stdout.readline())
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    store = SqliteSessionStore(db)
    stored = [e["n"] for e in store.load({"project_key": "-p", "session_id": "s"}) or []]
    store.close()
    assert stored[: acknowledged + 1] == list(range(acknowledged + 1))
    assert stored == list(range(len(stored)))  # in order, nothing twice, nothing torn
