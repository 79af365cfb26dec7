"""Glob, Grep (both backends) and LS on real folders."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tools_test_support import call

from queryloop.tools import ToolContext
from queryloop.tools.builtin import GlobTool, GrepTool, LSTool


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    files = {
        "src/app.py": "import os\n\ndef main():\n    return Error\n",
        "src/util.py": "def helper():\n    pass\n# error handling\n",
        "src/web/page.ts": "const x = 1;\nthrow new Error('x');\n",
        "src/web/view.tsx": "export const View = () => null;\n",
        "docs/readme.md": "Error codes\n",
        ".git/config": "Error in git\n",
        ".hidden/note.txt": "Error hidden\n",
    }
    for i, (name, text) in enumerate(files.items()):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        os.utime(path, (1_000_000 + i * 100, 1_000_000 + i * 100))
    (tmp_path / "src/blob.bin").write_bytes(b"Error\x00\x01")
    return tmp_path


@pytest.fixture
def ctx(tree: Path) -> ToolContext:
    return ToolContext(cwd=tree)


async def test_glob_sorts_newest_first_and_skips_git(ctx: ToolContext, tree: Path) -> None:
    got = await call(GlobTool(), {"pattern": "**/*.py"}, ctx)
    assert got.text.splitlines() == [str(tree / "src/util.py"), str(tree / "src/app.py")]
    every = await call(GlobTool(), {"pattern": "**/*", "path": str(tree)}, ctx)
    assert ".git" not in every.text and str(tree / ".hidden/note.txt") in every.text
    none = await call(GlobTool(), {"pattern": "*.rs"}, ctx)
    assert none.text == "No files found"
    bad = await call(GlobTool(), {"pattern": "*", "path": "missing"}, ctx)
    assert bad.is_error and "does not exist" in bad.text


async def test_glob_caps_results(ctx: ToolContext, tree: Path) -> None:
    many = tree / "many"
    many.mkdir()
    for i in range(105):
        (many / f"f{i}.txt").write_text("")
    got = await call(GlobTool(), {"pattern": "many/*.txt"}, ctx)
    assert "Showing 100 of 105 files" in got.text and len(got.text.splitlines()) == 101


BACKENDS = [pytest.param(False, id="python")]
if shutil.which("rg"):
    BACKENDS.append(pytest.param(True, id="ripgrep"))


@pytest.fixture(params=BACKENDS)
def grep(request: pytest.FixtureRequest) -> GrepTool:
    tool = GrepTool(use_ripgrep=request.param)
    assert (tool.rg_path is not None) is request.param
    return tool


async def test_grep_files_with_matches(grep: GrepTool, ctx: ToolContext, tree: Path) -> None:
    got = await call(grep, {"pattern": "Error"}, ctx)
    lines = got.text.splitlines()
    assert lines[0] == "Found 4 files"
    # newest first; .git and binary files skipped
    assert lines[1:] == [
        str(tree / p)
        for p in (".hidden/note.txt", "docs/readme.md", "src/web/page.ts", "src/app.py")
    ]
    ci = await call(grep, {"pattern": "error", "-i": True, "path": "src"}, ctx)
    assert "Found 3 files" in ci.text and str(tree / "src/util.py") in ci.text


async def test_grep_content_with_context_and_numbers(
    grep: GrepTool, ctx: ToolContext, tree: Path
) -> None:
    app = tree / "src/app.py"
    got = await call(
        grep, {"pattern": "return", "path": "src/app.py", "output_mode": "content", "-B": 1}, ctx
    )
    assert got.text == f"{app}-3-def main():\n{app}:4:    return Error"
    plain = await call(
        grep, {"pattern": "return", "path": "src", "output_mode": "content", "-n": False}, ctx
    )
    assert plain.text == f"{app}:    return Error"
    ctx_lines = await call(
        grep, {"pattern": "^import", "path": "src/app.py", "output_mode": "content", "-C": 1}, ctx
    )
    assert ctx_lines.text == f"{app}:1:import os\n{app}-2-"


async def test_grep_count_filters_and_limits(grep: GrepTool, ctx: ToolContext, tree: Path) -> None:
    count = await call(
        grep, {"pattern": "e", "path": "src", "output_mode": "count", "type": "py"}, ctx
    )
    assert count.text.splitlines()[:2] == [f"{tree / 'src/app.py'}:2", f"{tree / 'src/util.py'}:2"]
    assert "Found 4 matching lines across 2 files" in count.text
    braces = await call(grep, {"pattern": "const", "glob": "*.{ts,tsx}"}, ctx)
    assert "Found 2 files" in braces.text
    limited = await call(
        grep, {"pattern": ".", "path": "src", "output_mode": "content", "head_limit": 2}, ctx
    )
    assert len(limited.text.splitlines()) == 3 and "Showing the first 2" in limited.text
    nothing = await call(grep, {"pattern": "zzz_nothing"}, ctx)
    assert nothing.text == "No matches found" and not nothing.is_error


async def test_grep_multiline_and_errors(grep: GrepTool, ctx: ToolContext, tree: Path) -> None:
    multi = await call(
        grep, {"pattern": r"helper\(\):.*pass", "multiline": True, "output_mode": "content"}, ctx
    )
    util = tree / "src/util.py"
    assert multi.text == f"{util}:1:def helper():\n{util}:2:    pass"
    single = await call(grep, {"pattern": r"helper\(\):.*pass"}, ctx)
    assert single.text == "No matches found"
    bad = await call(grep, {"pattern": "(unclosed"}, ctx)
    assert bad.is_error and "(unclosed" in bad.text
    missing = await call(grep, {"pattern": "x", "path": "nope"}, ctx)
    assert missing.is_error and "does not exist" in missing.text


async def test_ls_tree_ignore_and_hidden(ctx: ToolContext, tree: Path) -> None:
    got = await call(LSTool(), {}, ctx)
    assert got.text.splitlines() == [
        f"- {tree}/",
        "  - docs/",
        "    - readme.md",
        "  - src/",
        "    - app.py",
        "    - blob.bin",
        "    - util.py",
        "    - web/",
        "      - page.ts",
        "      - view.tsx",
    ]
    filtered = await call(LSTool(), {"path": "src", "ignore": ["web", "*.bin"]}, ctx)
    assert filtered.text.splitlines() == [f"- {tree / 'src'}/", "  - app.py", "  - util.py"]
    not_dir = await call(LSTool(), {"path": "src/app.py"}, ctx)
    assert not_dir.is_error and "Use Read" in not_dir.text
