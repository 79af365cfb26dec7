"""`python -m queryloop.demo` end to end: the real command fixes the sample project's bug."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from queryloop.demo.script import reply

SAMPLE = Path(__file__).parents[2] / "src" / "queryloop" / "demo" / "sample_project"


def test_sample_project_fails_before_the_fix(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"], cwd=SAMPLE, capture_output=True, text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0 and "FAILED" in done.stderr


def test_demo_model_reacts_to_results_instead_of_replaying() -> None:
    start = [{"role": "user", "content": [{"type": "text", "text": "Fix the failing test"}]}]
    first = reply(start)
    assert first[-1]["name"] == "Bash"
    passing = {
        "type": "tool_result",
        "tool_use_id": first[-1]["id"],
        "content": "Ran 4 tests\n\nOK",
    }
    after = reply([*start, {"role": "assistant", "content": first},
                   {"role": "user", "content": [passing]}])  # fmt: skip
    assert [b["type"] for b in after] == ["text"] and "nothing to fix" in after[0]["text"]


def test_demo_runs_end_to_end(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, "-m", "queryloop.demo", "--delay", "0"],
        capture_output=True, text=True, env={**env, "TMPDIR": str(tmp_path)}, timeout=120,
    )  # fmt: skip
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "scripted demo model" in out and "OFFLINE DEMO" in out
    assert "⏺ Bash(python -m unittest -v)" in out and "⏺ Edit(" in out
    assert "0 API-rule violations" in out
    assert "tests now:    PASS" in out and "cache hits:" in out and "model turns:  6" in out
