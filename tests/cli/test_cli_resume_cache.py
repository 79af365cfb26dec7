"""A session resumed on a later day reads its prefix from the prompt cache (issue 23, item 1).

`queryloop -p`, then `faketime -f +1d queryloop --continue -p` against queryloop.testing's
MessagesServer, whose prompt-cache simulation bills every request as the API would. The
server runs in this process (its cache clock is not faked), so the cache is still warm when
the resumed process, one day later by its own clock, sends its first request: every token of
the prefix the first run wrote can be read back, and only what moved is written again.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import COMMAND, cli_env, project

from queryloop.messages.usage import Usage
from queryloop.session import latest_session
from queryloop.testing import MessagesServer, text, tool_use, turn, without_cache_control

FAKETIME = shutil.which("faketime")
needs_faketime = pytest.mark.skipif(
    FAKETIME is None, reason="the faketime Debian package is missing (./run test installs it)"
)


def run_at(
    base_url: str, tmp_path: Path, shift: str | None, *args: str
) -> subprocess.CompletedProcess[str]:
    """`queryloop ARGS` in tmp_path/proj, under `faketime -f SHIFT` when a shift is given."""
    prefix = [FAKETIME or "faketime", "-f", shift] if shift else []
    return subprocess.run(
        [*prefix, *COMMAND, *args],
        cwd=project(tmp_path),
        env=cli_env(base_url, tmp_path),
        capture_output=True,
        text=True,
        timeout=90,
    )


def usage_records(tmp_path: Path) -> list[Usage]:
    """The usage of every request the session's transcript recorded, in order."""
    path = latest_session(project(tmp_path), tmp_path / "home")
    assert path is not None
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [Usage.from_dict(r["usage"]) for r in records if r.get("record") == "usage"]


def read_share(usage: Usage) -> float:
    return usage.cache_read_input_tokens / usage.total_input_tokens


@needs_faketime
def test_a_session_resumed_a_day_later_reads_its_prefix_from_the_cache(tmp_path: Path) -> None:
    (project(tmp_path) / "QUERYLOOP.md").write_text("Answer in one short sentence.\n")
    script = [turn(text("Noted: the build uses make.")), turn(text("Yes, still make."))]
    with MessagesServer(script) as server:
        first = run_at(server.base_url, tmp_path, None, "-p", "How do we build this?")
        assert first.returncode == 0, first.stderr
        resumed = run_at(
            server.base_url, tmp_path, "+1d", "--continue", "-p", "Still the same tool?"
        )
        assert resumed.returncode == 0, resumed.stderr
        assert all(v == [] for v in server.violations)
        before, after = server.requests
    # The prefix of the last request before the resume is byte for byte the start of the
    # first request after it: tools, system, and every message it sent.
    assert after["tools"] == before["tools"]
    assert after["system"] == before["system"]
    sent = without_cache_control(before["messages"])
    assert without_cache_control(after["messages"])[: len(sent)] == sent
    usages = usage_records(tmp_path)
    assert len(usages) == 2
    assert read_share(usages[1]) >= 0.95, usages[1]
    # ... and the model is told the new date, at the end.
    last = json.dumps(after["messages"][-1])
    assert "The date has changed" in last


def forget_facts(tmp_path: Path) -> None:
    """Make the session's transcript look written by a version that kept no facts."""
    path = latest_session(project(tmp_path), tmp_path / "home")
    assert path is not None
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for record in records:
        record.pop("context", None)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


@needs_faketime
def test_a_session_written_by_an_earlier_version_resumes_onto_its_cache(tmp_path: Path) -> None:
    script = [turn(text("Noted.")), turn(text("Still noted.")), turn(text("Yes."))]
    with MessagesServer(script) as server:
        first = run_at(server.base_url, tmp_path, None, "-p", "Remember: blue.")
        assert first.returncode == 0, first.stderr
        forget_facts(tmp_path)
        for shift, prompt in (("+1d", "Which colour?"), ("+2d", "And now?")):
            resumed = run_at(server.base_url, tmp_path, shift, "--continue", "-p", prompt)
            assert resumed.returncode == 0, resumed.stderr
        assert all(v == [] for v in server.violations)
        bodies = server.requests
    # The date the first request carried is derived from the transcript, and then kept: each
    # resumed request starts with every byte of the one before it.
    for before, after in itertools.pairwise(bodies):
        assert after["tools"] == before["tools"] and after["system"] == before["system"]
        sent = without_cache_control(before["messages"])
        assert without_cache_control(after["messages"])[: len(sent)] == sent
    usages = usage_records(tmp_path)
    assert [read_share(u) >= 0.95 for u in usages[1:]] == [True, True], usages
    assert "The date has changed" in json.dumps(bodies[1]["messages"][-1])
    assert "The date has changed" in json.dumps(bodies[2]["messages"][-1])


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@needs_faketime
def test_memory_and_git_changes_are_told_at_the_end_of_a_resumed_session(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path)
    git(folder, "init", "-q", "-b", "main")
    (folder / "QUERYLOOP.md").write_text("Use make.\n")
    script = [turn(text("Noted.")), turn(text("Switching to ninja."))]
    with MessagesServer(script) as server:
        first = run_at(server.base_url, tmp_path, None, "-p", "How do we build?")
        assert first.returncode == 0, first.stderr
        (folder / "QUERYLOOP.md").write_text("Use ninja.\n")
        git(folder, "add", "QUERYLOOP.md")
        git(folder, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "ninja")
        resumed = run_at(server.base_url, tmp_path, "+1d", "--continue", "-p", "And now?")
        assert resumed.returncode == 0, resumed.stderr
        before, after = server.requests
    assert after["tools"] == before["tools"] and after["system"] == before["system"]
    assert "Use make." in json.dumps(after["messages"][0])  # the first message is kept
    sent = without_cache_control(before["messages"])
    assert without_cache_control(after["messages"])[: len(sent)] == sent
    last = json.dumps(after["messages"][-1])
    assert "The date has changed" in last
    assert "Use ninja." in last and "have changed since the start" in last
    assert "git status has changed" in last and "ninja" in last


LOOKUP_SERVER = Path(__file__).parents[1] / "mcp" / "servers" / "raw_lookup_server.py"
LOOKUP = "mcp__lookup__lookup"


def results_of(body: dict[str, Any], prefix: str) -> int:
    """How many tool results in the request start with `prefix`."""
    found = 0
    for message in body["messages"]:
        if message["role"] == "user" and not isinstance(message["content"], str):
            for block in message["content"]:
                if block.get("type") == "tool_result" and prefix in json.dumps(block["content"]):
                    found += 1
    return found


def lookup_model(body: dict[str, Any]) -> Any:
    """Load the deferred lookup tool once, then look a key up for every prompt."""
    prompts = sum(1 for m in body["messages"] if m["role"] == "user" and "look up" in json.dumps(m))
    if results_of(body, "<functions>") == 0:
        return turn(tool_use("ToolSearch", {"query": f"select:{LOOKUP}"}))
    if results_of(body, "value-") < prompts:
        return turn(tool_use(LOOKUP, {"key": f"k{prompts}"}))
    return turn(text(f"Looked up {prompts} keys."))


@needs_faketime
def test_tools_listings_and_mcp_instructions_do_not_move_on_resume(tmp_path: Path) -> None:
    """The tools array (with the deferred tool ToolSearch loaded), the system prompt, and the
    deferred-tool, MCP-instruction, skill and agent listings: byte for byte the same in the
    last request before a resume and the first after it."""
    home = tmp_path / "home"
    (home / "skills" / "deploy").mkdir(parents=True)
    (home / "skills" / "deploy" / "SKILL.md").write_text(
        "---\nname: deploy\ndescription: Ship the build to staging.\n---\nRun make deploy.\n"
    )
    (home / "agents").mkdir()
    (home / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a diff.\n---\nReview the diff you are given.\n"
    )
    (home / "settings.json").write_text(json.dumps({"toolSearch": "always"}))
    config = tmp_path / "mcp.json"
    entry = {
        "command": sys.executable,
        "args": [str(LOOKUP_SERVER)],
        "env": {"MCP_INSTRUCTIONS": "Keys are lower case."},
    }
    config.write_text(json.dumps({"mcpServers": {"lookup": entry}}))
    args = ["--mcp-config", str(config), "--permission-mode", "bypassPermissions"]
    with MessagesServer(lookup_model) as server:
        first = run_at(server.base_url, tmp_path, None, "-p", "look up a key", *args)
        assert first.returncode == 0, first.stderr
        resumed = run_at(
            server.base_url, tmp_path, "+1d", "--continue", "-p", "look up a key again", *args
        )
        assert resumed.returncode == 0, resumed.stderr
        assert all(v == [] for v in server.violations)
        bodies = server.requests
    assert len(bodies) == 5  # ToolSearch, lookup, answer; then lookup, answer
    before, after = bodies[2], bodies[3]
    assert [t["name"] for t in before["tools"]][-1] == LOOKUP  # loaded by ToolSearch
    assert after["tools"] == before["tools"]
    assert after["system"] == before["system"]
    sent = without_cache_control(before["messages"])
    assert without_cache_control(after["messages"])[: len(sent)] == sent
    listed = json.dumps(sent)
    for words in (LOOKUP, "Keys are lower case.", "Ship the build to staging.", "reviewer"):
        assert words in listed  # each listing was told before the resume ...
    told_now = json.dumps(after["messages"][len(sent) :])
    for words in (LOOKUP, "Keys are lower case.", "Ship the build", "Reviews a diff"):
        assert words not in told_now  # ... and is not told again after it
    assert results_of(bodies[-1], "value-") == 2  # the loaded tool still answers
    usages = usage_records(tmp_path)
    assert read_share(usages[3]) >= 0.95, usages[3]


@needs_faketime
def test_auto_cache_ttl_counts_the_pause_before_a_resume(tmp_path: Path) -> None:
    """`--cache-ttl auto`: a session continued ten minutes after its last request writes
    hour-long entries (the gap counts from the transcript's last request); continued at
    once, 5-minute ones."""
    script = [turn(text("One.")), turn(text("Two.")), turn(text("Three."))]
    with MessagesServer(script) as server:
        for shift, args in (
            (None, ["-p", "first"]),
            (None, ["--continue", "-p", "second"]),
            ("+10m", ["--continue", "-p", "third"]),
        ):
            done = run_at(server.base_url, tmp_path, shift, *args, "--cache-ttl", "auto")
            assert done.returncode == 0, done.stderr
        markers = [b["system"][-1]["cache_control"] for b in server.requests]
    assert markers == [
        {"type": "ephemeral"},
        {"type": "ephemeral"},
        {"type": "ephemeral", "ttl": "1h"},
    ]
