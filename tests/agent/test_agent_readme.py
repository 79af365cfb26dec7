"""The README's Python example runs as written against the local server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from queryloop.testing import MessagesServer, text, tool_use, turn

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_python_example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has a python example"
    return str(blocks[0])


def test_readme_sdk_example_runs_and_its_tool_is_called(tmp_path: Path) -> None:
    """As written: no permission mode, no callback. The built-in Read and the example's own
    tool both run; nothing is refused."""
    (tmp_path / "README.md").write_text("one two three\n")
    script = [
        turn(tool_use("Read", {"file_path": "README.md"})),
        turn(tool_use("word_count", {"text": "one two three"})),
        turn(text("README.md has 3 words.")),
        turn(text("It has 1 line.")),
    ]
    example = tmp_path / "example.py"
    example.write_text(readme_python_example())
    with MessagesServer(script) as server:
        env = {
            **os.environ,
            "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": server.base_url,
            "QUERYLOOP_HOME": str(tmp_path / "home"),
        }
        done = subprocess.run(
            [sys.executable, str(example)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        bodies = server.requests
        assert [v for v in server.violations if v] == []
    assert done.returncode == 0, done.stderr
    assert "completed" in done.stdout and "README.md has 3 words." in done.stdout
    assert "refused:" not in done.stdout
    assert len(bodies) == 4
    read_result, count_result = (_tool_result(bodies[i]) for i in (1, 2))
    assert not read_result.get("is_error") and "one two three" in str(read_result["content"])
    assert not count_result.get("is_error") and count_result["content"] == "3"


def _tool_result(body: dict[str, Any]) -> dict[str, Any]:
    [block] = [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    return dict(block)
