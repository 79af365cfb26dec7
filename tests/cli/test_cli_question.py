"""The permission question's lines (issue 25, item 1): the whole call, and for Bash what the
analysis found, as markup the REPL prints."""

from __future__ import annotations

import io

from rich.console import Console

from queryloop.cli.question import MAX_LISTED, question_lines


def shown(lines: list[str], width: int = 100) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, highlight=False)
    for line in lines:
        console.print(line)
    return buf.getvalue()


def test_a_command_of_several_lines_follows_the_question_as_it_is() -> None:
    command = "cat > notes.md <<'EOF'\n  [keep] the   spacing\nEOF\nrm -rf old"
    out = shown(question_lines("Bash", {"command": command}, reason="it asks"))
    assert out.startswith("Allow Bash? (it asks)\n")
    assert "\n    [keep] the   spacing\n" in out  # markup escaped, spaces kept
    assert "writes    notes.md (redirection)" in out
    assert "old and everything in it (rm)" in out


def test_other_tools_show_their_main_field_whole_or_their_input_as_json() -> None:
    path = "src/" + "deep/" * 30 + "file.py"
    assert path in shown(question_lines("Write", {"file_path": path, "content": "x"}), 300)
    out = shown(question_lines("mcp__db__query", {"sql": "select 1", "limit": 5}))
    assert 'Allow mcp__db__query({"sql":"select 1","limit":5})?' in out


def test_a_plain_command_adds_nothing_and_long_lists_say_how_many_more() -> None:
    assert question_lines("Bash", {"command": "ls -la"}) == ["[yellow]Allow Bash(ls -la)?[/]"]
    many = " ; ".join(f"touch f{i}" for i in range(MAX_LISTED + 5))
    out = shown(question_lines("Bash", {"command": many}), 2000)
    assert "… 5 more" in out and out.count("(touch)") == MAX_LISTED
