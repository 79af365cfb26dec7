"""Hypothesis: random wrappers × quoting × separators around a denied command are never allowed.

A denied core (`rm -rf`, spelled with any of its flag forms, `curl`, `git push`) gets its
program quoted or escaped, then is wrapped a few times at random — by a wrapper with options,
a nested shell (`bash -c`, `eval`, with correct quoting), a group, a substitution or a list
separator. The checker must deny or ask in bypassPermissions and in default mode with a
blanket `Bash` allow.
"""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from queryloop.permissions import PermissionChecker, PermissionContext, PermissionMode, RuleSet
from queryloop.tools.base import ToolContext
from queryloop.tools.builtin import BashTool

DENY = ["Bash(rm -rf:*)", "Bash(curl:*)", "Bash(git push:*)"]
RM_FLAGS = [
    "-rf", "-fr", "-Rf", "-rF -f", "-r -f", "-f -r", "-R -f", "--recursive --force",
    "--force -r", "-rfv", "-v -rf", "--rec --for", "-r --force",
]  # fmt: skip
PROGRAM_SPELLINGS = [
    "{p}", "'{p}'", '"{p}"', "\\{p}", "/bin/{p}", "/usr/bin/{p}", "{h}''{t}", "{h}\"\"{t}",
    "$'{p}'", "{h}\\{t}",
]  # fmt: skip
WRAPPERS = [
    "sudo", "sudo -u root", "sudo -E", "env", "env -i", "env -u HOME", "env A=1", "nice",
    "nice -n 5", "nohup", "time", "time -p", "timeout 5", "timeout -s KILL 5", "stdbuf -oL",
    "setsid", "command", "builtin", "exec", "ionice -c3", "chrt 10", "unbuffer",
    "flock /tmp/l", "watch -x", "xargs", "xargs -0", "noglob", "uv run", "doas",
]  # fmt: skip
PREFIXES = ["ls; ", "true && ", "false || ", "echo a | ", "ls\n", "ls & ", "# x\n"]


@st.composite
def core(draw: st.DrawFn) -> str:
    """A denied command with its program spelled some other way."""
    kind = draw(st.sampled_from(["rm", "curl", "git"]))
    program = {"rm": "rm", "curl": "curl", "git": "git"}[kind]
    spelling = draw(st.sampled_from(PROGRAM_SPELLINGS))
    name = spelling.format(p=program, h=program[:1], t=program[1:])
    if kind == "rm":
        return f"{name} {draw(st.sampled_from(RM_FLAGS))} target"
    if kind == "curl":
        return f"{name} -s https://example.com"
    globals_ = draw(st.sampled_from(["", "-C . ", "--no-pager ", "-c k=v ", "-P "]))
    return f"{name} {globals_}push origin"


def wrap(command: str, how: str) -> str:
    """Put `command` inside one more layer."""
    if how == "bash -c":
        return f"bash -c {shlex.quote(command)}"
    if how == "sh -c":
        return f"sh -c {shlex.quote(command)}"
    if how == "eval":
        return f"eval {shlex.quote(command)}"
    if how == "group":
        return f"{{ {command}; }}"
    if how == "subshell":
        return f"( {command} )"
    if how == "substitution":
        return f"echo $({command})"
    if how.startswith("prefix:"):
        return how[len("prefix:") :] + command
    return f"{how} {command}"


LAYERS = st.sampled_from(
    [*WRAPPERS, "bash -c", "sh -c", "eval", "group", "subshell", "substitution"]
    + [f"prefix:{p}" for p in PREFIXES]
)


@st.composite
def composition(draw: st.DrawFn) -> str:
    command = draw(core())
    for how in draw(st.lists(LAYERS, min_size=1, max_size=4)):
        command = wrap(command, how)
    return command


async def decide(mode: PermissionMode, allow: list[str], command: str, cwd: Path) -> str:
    rules = RuleSet.from_strings(allow=allow, deny=DENY)
    checker = PermissionChecker(PermissionContext(mode=mode, rules=rules, home=cwd))
    decision = await checker.evaluate(BashTool(), {"command": command}, ToolContext(cwd=cwd))
    return decision.behavior


@settings(max_examples=400, deadline=None)
@given(command=composition())
# Found by a local run: tree-sitter read `{ {` as one word where bash splits it.
@example(command="sudo { { git -C . push origin; }; }")
def test_composed_attempt_is_never_allowed(command: str) -> None:
    cwd = Path.cwd()
    for mode, allow in ((PermissionMode.BYPASS, []), (PermissionMode.DEFAULT, ["Bash"])):
        verdict = asyncio.run(decide(mode, allow, command, cwd))
        assert verdict in ("deny", "ask"), (mode, command)
