"""The REPL in a pseudo-terminal (pexpect) for issue 15: tool-use summaries, prompts queued
while a turn runs, skills, `#` memory and /rewind."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pexpect
import pytest
from cli_helpers import cli_env, project

from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

SUMMARY_MODEL = "claude-haiku-5-5"
PROMPT = "> "

pytestmark = pytest.mark.slow


@contextmanager
def repl(
    server: MessagesServer, tmp_path: Path, *args: str, summaries: bool = False
) -> Iterator[Any]:
    """The real `queryloop` REPL on a dumb terminal (plain line input)."""
    env = cli_env(
        server.base_url, tmp_path, TERM="dumb", COLUMNS="120", LINES="40",
        QUERYLOOP_TOOL_USE_SUMMARIES="1" if summaries else "0",
    )  # fmt: skip
    child = pexpect.spawn(
        sys.executable,
        ["-m", "queryloop.cli.main", *args],
        cwd=str(project(tmp_path)), env=env, encoding="utf-8", timeout=60,
        dimensions=(40, 120),
    )  # fmt: skip
    try:
        child.expect("/help for commands")
        child.expect(PROMPT)
        yield child
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def split_models(main: list[Turn], summary: str = "Echoed the marker") -> Any:
    """Main turns in order; every summary request gets `summary`."""
    calls = {"main": 0}

    def answer(body: dict[str, Any]) -> Turn:
        if body["model"] == SUMMARY_MODEL:
            return turn(text(summary))
        index = calls["main"]
        calls["main"] += 1
        return main[index]

    return answer


def test_repl_shows_a_tool_run_as_its_summary_line(tmp_path: Path) -> None:
    main = [
        turn(text("Checking."), tool_use("Bash", {"command": "echo tool-marker"})),
        turn(text("Finished checking.")),
    ]
    with MessagesServer(split_models(main)) as server:
        with repl(server, tmp_path, "--allowed-tools", "Bash(echo:*)", summaries=True) as child:
            child.sendline("check it")
            child.expect("tool-marker")
            child.expect(r"✻ Echoed the marker \(1 tool call: Bash\)")
            child.expect(PROMPT)
        models = [r.body["model"] for r in server.recorded]
    assert models.count(SUMMARY_MODEL) == 1
