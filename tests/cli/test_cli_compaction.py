"""`queryloop -p --compaction economy` as a subprocess against the local Messages server."""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import project, run_cli

from queryloop.compact import CLEARED_PLACEHOLDER
from queryloop.testing import MessagesServer, text, tool_use, turn

STEPS = 9


def _run(tmp_path: Path, *flags: str) -> str:
    """Nine `cat` calls of a 4k-token file, then an answer; the last request's messages."""
    (project(tmp_path) / "big.txt").write_text("audit line\n" * 1_500)
    script = [
        turn(text(f"Step {n}."), tool_use("Bash", {"command": "cat big.txt"})) for n in range(STEPS)
    ]
    with MessagesServer([*script, turn(text("Done."))]) as server:
        done = run_cli(
            server.base_url, tmp_path, "-p", "audit", "--allowed-tools", "Bash(cat:*)", *flags
        )
        assert done.returncode == 0, done.stderr
        assert all(v == [] for v in server.violations)
        return json.dumps(server.requests[-1]["messages"])


def test_economy_from_the_command_line_clears_old_results_early(tmp_path: Path) -> None:
    """The default clears nothing in so short a session while the cache is warm
    (tests/compact/test_compact_policy.py), so the placeholders come from the flag."""
    last = _run(tmp_path, "--compaction", "economy")
    assert last.count(CLEARED_PLACEHOLDER) >= 5  # all but the two newest, after 7 requests
    assert last.count("audit line") >= 2 * 1_500  # the two newest results verbatim
