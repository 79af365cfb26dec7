"""Claude Code's memory files beside queryloop's, with `@path` imports (issue 22, deliverable 1):
which files, in which order, and which imports are followed (code.claude.com/docs/en/memory).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from file_support import write_text as write
from queryloop.config import discover_memory_files
from queryloop.config.memory import SessionContext
from queryloop.context import AttachmentContext, AttachmentType, get_attachments
from queryloop.context.memory_imports import ImportPolicy, import_paths
from queryloop.context.user_context import MemoryFile, render_memory
from queryloop.messages import Message, assistant_message, tool_result_message, user_message
from queryloop.messages.blocks import ToolUseBlock


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    (folder / ".git").mkdir(parents=True)  # the repository root memory is read up to
    return folder


def found(files: Sequence[MemoryFile]) -> list[tuple[str, str]]:
    return [(f.content.strip(), f.level) for f in files]


def test_every_memory_file_in_order(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(Path(os.environ["QUERYLOOP_CLAUDE_MANAGED_DIR"]) / "CLAUDE.md", "managed")
    write(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "CLAUDE.md", "claude user")
    write(home / "QUERYLOOP.md", "queryloop user")
    for name in ("CLAUDE.local.md", "AGENTS.md", "QUERYLOOP.md", ".claude/CLAUDE.md", "CLAUDE.md"):
        write(repo / name, f"root {name}")
    write(repo / "app" / "CLAUDE.md", "app CLAUDE.md")
    write(repo / "app" / "CLAUDE.local.md", "app local")
    files = discover_memory_files(repo / "app", user_home=home)
    assert found(files) == [
        ("managed", "managed"),
        ("claude user", "user"),
        ("queryloop user", "user"),
        ("root CLAUDE.md", "project"),
        ("root .claude/CLAUDE.md", "project"),
        ("root QUERYLOOP.md", "project"),
        ("root AGENTS.md", "project"),
        ("root CLAUDE.local.md", "local"),
        ("app CLAUDE.md", "project"),
        ("app local", "local"),
    ]
    text = render_memory(files)
    assert f"Contents of {(repo / 'CLAUDE.local.md').resolve()} (user's private project " in text
    assert "instructions, not checked in):\n\nroot CLAUDE.local.md" in text


def test_a_symlinked_claude_md_is_read_once(repo: Path, tmp_path: Path) -> None:
    write(repo / "AGENTS.md", "shared rules")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    assert found(discover_memory_files(repo, user_home=tmp_path)) == [("shared rules", "project")]


def test_imports_are_relative_to_the_importing_file(repo: Path, tmp_path: Path) -> None:
    write(repo / "CLAUDE.md", "root\nSee @docs/guide.md for the guide.")
    write(repo / "docs" / "guide.md", "guide\n@style.md")
    write(repo / "docs" / "style.md", "docs style")
    write(repo / "style.md", "the wrong style")
    files = discover_memory_files(repo, user_home=tmp_path)
    assert found(files) == [
        ("root\nSee @docs/guide.md for the guide.", "project"),
        ("guide\n@style.md", "project"),
        ("docs style", "project"),
    ]
    assert [f.parent for f in files] == [
        None,
        (repo / "CLAUDE.md").resolve(),
        (repo / "docs" / "guide.md").resolve(),
    ]


def test_home_and_absolute_imports(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    write(tmp_path / "me" / ".claude" / "prefs.md", "my prefs")
    absolute = write(tmp_path / "shared" / "team.md", "team rules")
    write(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "CLAUDE.md", f"@~/.claude/prefs.md\n@{absolute}")
    files = discover_memory_files(repo, user_home=tmp_path / "home")
    assert [f.content.strip() for f in files][1:] == ["my prefs", "team rules"]


def test_at_most_five_hops(repo: Path, tmp_path: Path) -> None:
    write(repo / "CLAUDE.md", "@f1.md")
    for hop in range(1, 8):
        write(repo / f"f{hop}.md", f"hop {hop}\n@f{hop + 1}.md")
    contents = [f.content.split("\n")[0] for f in discover_memory_files(repo, user_home=tmp_path)]
    assert contents == ["@f1.md", "hop 1", "hop 2", "hop 3", "hop 4", "hop 5"]


def test_a_cycle_reads_each_file_once(repo: Path, tmp_path: Path) -> None:
    write(repo / "CLAUDE.md", "@a.md")
    write(repo / "a.md", "a\n@b.md")
    write(repo / "b.md", "b\n@a.md\n@CLAUDE.md")
    contents = [f.content.split("\n")[0] for f in discover_memory_files(repo, user_home=tmp_path)]
    assert contents == ["@a.md", "a", "b"]


def test_no_imports_in_code() -> None:
    text = (
        "Use `@inline/code.md` and @real.md.\n\n"
        "```\n@fenced/block.md\n```\n\n"
        "    @indented/block.md\n\n"
        "- item @list/item.md\n"
        "mail me at someone@example.com, ping @ or @#x\n"
        "@docs/with\\ space.md#section\n"
    )
    assert import_paths(text) == ["real.md.", "list/item.md", "docs/with space.md"]


def test_external_imports_need_trust(repo: Path, tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere" / "secret-notes.md", "outside the project")
    write(repo / "CLAUDE.md", f"@{outside}\n@../elsewhere/secret-notes.md")
    notices: list[str] = []
    untrusted = ImportPolicy(repo.resolve(), external=False)
    files = discover_memory_files(repo, user_home=tmp_path, policy=untrusted, notices=notices)
    assert len(files) == 1
    (notice,) = notices
    assert str(outside) in notice and "not trusted" in notice
    trusted = ImportPolicy(repo.resolve(), external=True)
    files = discover_memory_files(repo, user_home=tmp_path, policy=trusted)
    assert [f.content for f in files][1:] == ["outside the project"]


def test_a_denied_file_is_never_imported(repo: Path, tmp_path: Path) -> None:
    write(repo / ".env", "SECRET=hunter2")
    write(repo / "CLAUDE.md", "@.env")
    write(Path(os.environ["CLAUDE_CONFIG_DIR"]) / "CLAUDE.md", f"@{repo / '.env'}")
    policy = ImportPolicy(repo.resolve(), external=True, denied=lambda p: p.name == ".env")
    notices: list[str] = []
    files = discover_memory_files(repo, user_home=tmp_path, policy=policy, notices=notices)
    assert "hunter2" not in "".join(f.content for f in files)
    assert notices and all("deny rule" in n for n in notices)


def test_the_session_context_renders_once_with_its_policy(repo: Path, tmp_path: Path) -> None:
    write(repo / "CLAUDE.md", "claude rules\n@notes.md")
    write(repo / "notes.md", "imported notes")
    session = SessionContext(repo, user_home=tmp_path)
    memory = session.user_context()["queryloopMd"]
    assert "claude rules" in memory and "imported notes" in memory
    write(repo / "notes.md", "changed")
    assert session.user_context()["queryloopMd"] == memory


async def test_nested_claude_memory_and_its_imports(repo: Path) -> None:
    write(repo / "lib" / "CLAUDE.md", "lib claude\n@conventions.md")
    write(repo / "lib" / "conventions.md", "lib conventions")
    write(repo / "lib" / ".claude" / "CLAUDE.md", "lib dot-claude")
    write(repo / "lib" / "CLAUDE.local.md", "lib local")
    write(repo / "lib" / "x.py", "")
    history: list[Message] = [
        user_message("edit it"),
        assistant_message(
            [ToolUseBlock(id="t1", name="Read", input={"file_path": "lib/x.py"})],
            message_id="m1",
        ),
        tool_result_message("t1", "ok"),
    ]
    policy = ImportPolicy(repo.resolve(), external=False)
    got = await get_attachments(None, AttachmentContext(cwd=repo, memory_imports=policy), history)
    assert [(a.type, a.data["content"].strip()) for a in got] == [
        (AttachmentType.NESTED_MEMORY, "lib claude\n@conventions.md"),
        (AttachmentType.NESTED_MEMORY, "lib conventions"),
        (AttachmentType.NESTED_MEMORY, "lib dot-claude"),
        (AttachmentType.NESTED_MEMORY, "lib local"),
    ]
    assert got[1].data["parent"] == str((repo / "lib" / "CLAUDE.md").resolve())
    without = await get_attachments(None, AttachmentContext(cwd=repo), history)
    assert len(without) == 3  # no policy: no imports
