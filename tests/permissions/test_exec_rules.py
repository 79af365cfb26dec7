"""The Bash rules as executed programs meet them (`permissions.exec_rules`): which rule refuses
a program under which name, git's push transport, and ask rules the line already matched."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from queryloop.permissions import RuleSet
from queryloop.permissions.exec_rules import ExecRules
from queryloop.sandbox import ExecCall

RULES = RuleSet.from_strings(
    deny=["Bash(rm -rf:*)", "Bash(curl:*)", "Bash(git push:*)"], ask=["Bash(wget:*)"]
)
WORD = st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=8)
SHELL_KEYWORDS = frozenset(
    "if then else elif fi case esac for select while until do done in function time coproc".split()
)
PROGRAM = WORD.filter(lambda w: w not in SHELL_KEYWORDS)
"""A program's name: a rule's first word that is a shell keyword is no program at all."""


def rules_for(command: str = "true") -> ExecRules:
    found = ExecRules.for_command(RULES, command)
    assert found is not None
    return found


def call(
    path: str, *argv: str, names: tuple[str, ...] = (), parent: tuple[str, ...] = ()
) -> ExecCall:
    return ExecCall(path, names or (path.rsplit("/", 1)[-1],), argv, lambda: parent)


def test_the_watched_programs_are_the_rules_programs() -> None:
    assert rules_for().programs() == {"rm", "curl", "git", "wget", "ssh"}


def test_a_program_is_refused_under_the_name_its_file_has() -> None:
    refusal = rules_for().refusal(call("./zz", "zz", "-fr", "x", names=("rm", "zz")))
    assert refusal is not None and "zz is rm" in refusal and "Bash(rm -rf:*)" in refusal
    assert rules_for().refusal(call("./zz", "zz", "x", names=("rm", "zz"))) is None


def test_a_wrapper_is_not_unwrapped_at_exec_time() -> None:
    # env runs rm through another exec, which is checked then.
    assert rules_for().refusal(call("/usr/bin/env", "env", "rm", "-rf", "x")) is None


def test_an_ask_rule_refuses_unless_the_line_matched_it() -> None:
    hidden = rules_for("make").refusal(call("/usr/bin/wget", "wget", "u"))
    assert hidden is not None and "nobody can give in the middle of a command" in hidden
    assert rules_for("wget u && make").refusal(call("/usr/bin/wget", "wget", "u")) is None


def test_no_bash_rule_means_nothing_to_check() -> None:
    assert ExecRules.for_command(RuleSet.from_strings(deny=["Read(./.env)"]), "ls") is None


def test_git_push_transport() -> None:
    rules = rules_for()
    assert rules.refusal(call("/usr/lib/git-core/git-receive-pack", "git-receive-pack", "r"))
    ssh = call("/usr/bin/ssh", "ssh", "host", "git-receive-pack 'r.git'")
    assert rules.refusal(ssh) is not None
    assert rules.refusal(call("/usr/bin/ssh", "ssh", "host", "git-upload-pack 'r.git'")) is None
    helper = "/usr/lib/git-core/git-remote-https"
    assert rules.refusal(call(helper, "git-remote-https", "o", parent=("git", "fetch"))) is None
    aliased = ("git", "-c", "alias.b=push", "b")
    assert rules.refusal(call(helper, "git-remote-https", "o", parent=aliased)) is not None


def test_without_a_push_rule_the_transport_is_free() -> None:
    rules = ExecRules.for_command(RuleSet.from_strings(deny=["Bash(rm:*)"]), "ls")
    assert rules is not None
    assert rules.refusal(call("/usr/lib/git-core/git-receive-pack", "git-receive-pack")) is None


@given(program=PROGRAM, flag=WORD, args=st.lists(WORD, max_size=3), alias=WORD)
def test_a_denied_program_is_refused_under_any_other_name(
    program: str, flag: str, args: list[str], alias: str
) -> None:
    rules = ExecRules.for_command(RuleSet.from_strings(deny=[f"Bash({program} --{flag}:*)"]), "ls")
    assert rules is not None and program in rules.programs()
    names = (program, alias)
    assert rules.refusal(call(f"./{alias}", alias, f"--{flag}", *args, names=names)) is not None
    if alias != program:
        assert rules.refusal(call(f"./{alias}", alias, f"--{flag}", *args)) is None
