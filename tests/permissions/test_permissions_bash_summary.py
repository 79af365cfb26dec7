"""`permissions.shell.bash.summarize`: what a Bash line runs and writes, from the same analysis the
rules use, for the person asked to approve it (issue 25, item 1)."""

from __future__ import annotations

from queryloop.permissions.shell.bash import summarize


def test_the_side_effect_after_a_harmless_start_is_its_own_command_and_write() -> None:
    found = summarize("python3 -c 'print(\"just printing a harmless greeting\")' ; touch /tmp/x/H")
    assert found.commands == (
        "python3 -c 'print(\"just printing a harmless greeting\")'",
        "touch /tmp/x/H",
    )
    assert [(t.word, t.program) for t in found.writes] == [("/tmp/x/H", "touch")]
    assert found.opaque == ("python3",)  # its inline code may write anything
    assert not found.writes_at_run_time and found.unseen == ()


def test_nested_shell_code_is_listed_and_run_time_targets_are_said() -> None:
    found = summarize('bash -c "rm notes; ls" | xargs rm')
    assert found.commands == ("bash -c 'rm notes; ls'", "rm notes", "ls", "xargs rm")
    assert [(t.word, t.program) for t in found.writes] == [("notes", "rm")]
    assert found.writes_at_run_time  # xargs names the files rm removes when it runs


def test_a_wrappers_inner_view_is_not_a_second_command() -> None:
    found = summarize("sudo rm -rf build && git -C . push > log.txt")
    assert found.commands == ("sudo rm -rf build", "git -C . push")
    assert {(t.word, t.program, t.tree) for t in found.writes} == {
        ("build", "rm", True),
        ("log.txt", "redirection", False),
    }
    assert found.opaque == ()


def test_what_the_analysis_cannot_see_is_named() -> None:
    found = summarize('$TOOL --force "$TARGET"')
    assert found.commands == ("$… --force $…",)
    assert found.unseen and "not statically known" in found.unseen[0]


def test_a_single_reading_command_has_nothing_to_add() -> None:
    found = summarize("ls -la src")
    assert found.commands == ("ls -la src",)
    assert found.writes == () and found.opaque == () and found.unseen == ()
