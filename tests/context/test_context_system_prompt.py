"""Channel one: the system prompt blocks and the git snapshot appended to them."""

from __future__ import annotations

import subprocess
from pathlib import Path

from queryloop.config import SessionContext
from queryloop.context import (
    DEFAULT_STATIC_PREFIX,
    SYSTEM_PROMPT_DYNAMIC_BOUNDARY,
    append_system_context,
    build_dynamic_suffix,
    build_system_prompt,
    get_system_context,
    split_at_boundary,
)
from queryloop.context.system_context import MAX_STATUS_CHARS


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def make_repo(path: Path, commits: int = 1) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for i in range(commits):
        (path / f"f{i}.txt").write_text(f"{i}\n")
        git(path, "add", ".")
        git(path, "commit", "-q", "-m", f"commit number {i}")
    return path


def test_blocks_are_in_order_and_empty_ones_are_omitted() -> None:
    blocks = build_system_prompt(attribution="attr", dynamic_suffix="dyn", append="extra")
    assert [b["text"] for b in blocks] == ["attr", DEFAULT_STATIC_PREFIX, "dyn", "extra"]
    assert all(b["type"] == "text" and "cache_control" not in b for b in blocks)

    blocks = build_system_prompt(attribution=None, dynamic_suffix="  ", append="")
    assert [b["text"] for b in blocks] == [DEFAULT_STATIC_PREFIX]

    custom = build_system_prompt(
        attribution="", static_prefix="You are X.", dynamic_suffix="d", append=None
    )
    assert [b["text"] for b in custom] == ["You are X.", "d"]


def test_static_prefix_is_lean_and_says_what_it_must() -> None:
    text = DEFAULT_STATIC_PREFIX
    assert (
        "write down any important information you might need later in your response, "
        "as the original tool result may be cleared later." in text.replace("\n", " ")
    )
    assert "<system-reminder>" in text
    assert "ToolSearch" in text
    assert len(text) / 4 < 900  # a few hundred tokens, not 22k


def test_dynamic_suffix_has_environment_and_mcp_only_when_not_by_delta(tmp_path: Path) -> None:
    suffix = build_dynamic_suffix(
        cwd=tmp_path, model="claude-x", mcp_instructions={"srv": "Use srv carefully."}
    )
    assert f"Working directory: {tmp_path}" in suffix
    assert "Is directory a git repo: No" in suffix
    assert "Model: claude-x" in suffix
    assert "Use srv carefully." not in suffix  # announced by mcp_instructions_delta instead
    inline = build_dynamic_suffix(
        cwd=tmp_path,
        model="m",
        mcp_instructions={"srv": "Use srv carefully."},
        mcp_instructions_by_delta=False,
    )
    assert "## srv\nUse srv carefully." in inline
    make_repo(tmp_path / "r", commits=0)
    assert "git repo: Yes" in build_dynamic_suffix(cwd=tmp_path / "r", model="m")


def test_boundary_splits_static_from_dynamic() -> None:
    static, dynamic = split_at_boundary(["a", "b", SYSTEM_PROMPT_DYNAMIC_BOUNDARY, "c", ""])
    assert (static, dynamic) == ("a\n\nb", "c")
    assert split_at_boundary(["only"]) == ("only", "")


def test_append_system_context_adds_one_block_and_copies() -> None:
    system = build_system_prompt(attribution=None, dynamic_suffix="d", append=None)
    out = append_system_context(system, {"gitStatus": "clean", "empty": ""})
    assert len(out) == len(system) + 1
    assert out[-1] == {"type": "text", "text": "gitStatus: clean"}
    assert len(system) == 2  # input untouched
    assert append_system_context(system, {}) == system


def test_git_snapshot_of_a_real_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", commits=7)
    (repo / "f0.txt").write_text("changed\n")
    (repo / "new.txt").write_text("new\n")
    git(repo, "checkout", "-q", "-b", "feature")
    status = get_system_context(repo)["gitStatus"]
    assert "Current branch: feature" in status
    assert "Main branch (you will usually use this for PRs): main" in status
    assert " M f0.txt" in status and "?? new.txt" in status
    assert "commit number 6" in status and "commit number 2" in status
    assert "commit number 1" not in status  # only the last five
    assert "snapshot in time" in status


def test_status_is_capped_with_a_note(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    for i in range(300):
        (repo / f"untracked_file_with_a_long_name_{i:04d}.txt").write_text("x")
    status = get_system_context(repo)["gitStatus"]
    section = status.split("Status:\n", 1)[1].split("\n\nRecent commits:")[0]
    assert MAX_STATUS_CHARS < len(section) < MAX_STATUS_CHARS + 300
    assert "truncated" in section


def test_no_snapshot_outside_a_repository(tmp_path: Path) -> None:
    assert get_system_context(tmp_path) == {}


def test_session_context_takes_the_snapshot_once_per_session(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    first = SessionContext(repo, user_home=tmp_path / "home")
    before = first.system_context()
    (repo / "later.txt").write_text("x")
    assert first.system_context() == before  # memoized for this session
    second = SessionContext(repo, user_home=tmp_path / "home")
    assert "later.txt" in second.system_context()["gitStatus"]  # not a global memo
