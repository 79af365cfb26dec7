"""The REPL in a pseudo-terminal (pexpect) for issue 15: tool-use summaries, prompts queued
while a turn runs, skills, `#` memory and /rewind."""

from __future__ import annotations

import json
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
    server: MessagesServer,
    tmp_path: Path,
    *args: str,
    summaries: bool = False,
    term: str = "dumb",
) -> Iterator[Any]:
    """The real `queryloop` REPL (a dumb terminal: plain line input; xterm: prompt_toolkit)."""
    env = cli_env(
        server.base_url, tmp_path, TERM=term, COLUMNS="120", LINES="40",
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
        child.expect(prompt_of(term))
        yield child
        child.sendline("/exit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


def prompt_of(term: str) -> str:
    """prompt_toolkit draws "> " as ">" plus cursor moves; the dumb reader prints it."""
    return PROMPT if term == "dumb" else ">\x08"


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


STORY = " ".join(f"story{i}" for i in range(300))
WAIT_FOR_GO = "while [ ! -f go ]; do sleep 0.05; done; echo released"


def by_last_prompt(answers: dict[str, Turn]) -> Any:
    """Answer by the text of the last user message that is not a tool result."""

    def answer(body: dict[str, Any]) -> Turn:
        for message in reversed(body["messages"]):
            if message["role"] != "user":
                continue
            content = message["content"]
            blocks = [content] if isinstance(content, str) else content
            for block in blocks:
                if isinstance(block, str):
                    return answers.get(block, turn(text("?")))
                if block.get("type") == "tool_result":
                    return answers["<tool_result>"]
                if block.get("type") == "text" and block["text"] in answers:
                    return answers[block["text"]]
        return turn(text("?"))

    return answer


@pytest.mark.parametrize("term", ["dumb", "xterm-256color"])
def test_repl_queues_a_prompt_typed_during_tools(tmp_path: Path, term: str) -> None:
    answers = {
        "run the slow check": turn(text("Running."), tool_use("Bash", {"command": WAIT_FOR_GO})),
        "<tool_result>": turn(text("Done, and I checked the docs too.")),
    }
    with MessagesServer(by_last_prompt(answers)) as server:
        with repl(server, tmp_path, "--permission-mode", "bypassPermissions", term=term) as child:
            child.sendline("run the slow check")
            child.expect("Bash")
            child.sendline("also check the docs")
            child.expect(r"queued \(sent at the next tool result\): also check the docs")
            (project(tmp_path) / "go").write_text("")
            child.expect("released")
            child.expect("queued prompt sent to the model: also check the docs")
            child.expect("Done, and I checked the docs too.")
            child.expect(prompt_of(term))
        bodies = server.requests
    assert len(bodies) == 2
    assert "while you were working:\\nalso check the docs" in json.dumps(bodies[1]["messages"])


def test_repl_runs_a_prompt_queued_at_the_end_of_a_turn_next(tmp_path: Path) -> None:
    answers = {
        "tell a story": turn(text(STORY)),
        "and a short one": turn(text("The end.")),
    }
    with MessagesServer(by_last_prompt(answers), event_delay=0.02) as server:
        with repl(server, tmp_path) as child:
            child.sendline("tell a story")
            child.expect("story3 ")
            child.sendline("and a short one")
            child.expect(r"queued \(sent at the next tool result\): and a short one")
            child.expect("story299")
            child.expect("sending the queued prompt: and a short one")
            child.expect("The end.")
            child.expect(PROMPT)
        bodies = server.requests
    assert len(bodies) == 2
    assert bodies[1]["messages"][-1]["content"][0]["text"] == "and a short one"


def test_repl_ctrl_c_gives_the_queued_prompt_back(tmp_path: Path) -> None:
    answers = {"tell a story": turn(text(STORY + " " + STORY))}
    with MessagesServer(by_last_prompt(answers), event_delay=0.02) as server:
        with repl(server, tmp_path) as child:
            child.sendline("tell a story")
            child.expect("story3 ")
            child.sendline("never mind that")
            child.expect("queued")
            child.sendintr()
            child.expect("Interrupted: the queued prompt was not sent; it is back in the input")
            child.expect("never mind that")
            child.expect(PROMPT)
        bodies = server.requests
    assert len(bodies) == 1
    assert "never mind that" not in json.dumps(bodies)


SKILL = """---
name: release-notes
description: Turn a list of changes into release notes.
---
SKILL-BODY-IN-REPL: write notes for $ARGUMENTS.
"""


def test_repl_slash_skill_name_loads_the_skill(tmp_path: Path) -> None:
    folder = tmp_path / "home" / "skills" / "release-notes"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL)
    with MessagesServer([turn(text("Notes for v5 are ready."))]) as server:
        with repl(server, tmp_path) as child:
            child.sendline("/release-notes v5")
            child.expect("Notes for v5 are ready.")
            child.expect(PROMPT)
        body = json.dumps(server.requests[0]["messages"])
    assert "SKILL-BODY-IN-REPL: write notes for v5." in body
    assert "/release-notes v5" in body


def test_repl_hash_line_adds_to_memory(tmp_path: Path) -> None:
    with MessagesServer([]) as server:
        with repl(server, tmp_path) as child:
            child.sendline("# always use pnpm")
            child.expect(r"Save to \[p\]roject memory")
            child.sendline("p")
            child.expect("Saved to project memory")
            child.expect(PROMPT)
            child.sendline("/memory user prefers short answers")
            child.expect("Saved to user memory")
            child.expect(PROMPT)
            child.sendline("/memory")
            child.expect("QUERYLOOP.md")
            child.expect(PROMPT)
        assert server.requests == []  # nothing was sent to the model
    assert (project(tmp_path) / "QUERYLOOP.md").read_text() == "- always use pnpm\n"
    assert (tmp_path / "home" / "QUERYLOOP.md").read_text() == "- prefers short answers\n"


def test_repl_rewind_restores_code_and_conversation(tmp_path: Path) -> None:
    script = [
        turn(tool_use("Write", {"file_path": "notes.txt", "content": "first\n"})),
        turn(text("Wrote notes.")),
        turn(tool_use("Write", {"file_path": "notes.txt", "content": "second\n"})),
        turn(text("Rewrote notes.")),
        turn(text("Back at prompt two.")),
    ]
    notes = project(tmp_path) / "notes.txt"
    with MessagesServer(script) as server:
        with repl(server, tmp_path, "--permission-mode", "bypassPermissions") as child:
            child.sendline("write the notes")
            child.expect("Wrote notes.")
            child.expect(PROMPT)
            child.sendline("rewrite the notes")
            child.expect("Rewrote notes.")
            child.expect(PROMPT)
            assert notes.read_text() == "second\n"
            child.sendline("/rewind")
            child.expect("rewrite the notes")
            child.expect("Rewind to before which prompt")
            child.sendline("2")
            child.expect("Changes made through Bash")
            child.expect("evermind")
            child.sendline("b")
            child.expect("Rewound: conversation rewound to before prompt 2; 1 file")
            child.expect("The prompt is back in the input: rewrite the notes")
            child.expect(PROMPT)
            assert notes.read_text() == "first\n"
            child.sendline("what now")
            child.expect("Back at prompt two.")
            child.expect(PROMPT)
        sent = json.dumps(server.requests[-1]["messages"])
    assert "write the notes" in sent and "what now" in sent
    assert "rewrite the notes" not in sent
