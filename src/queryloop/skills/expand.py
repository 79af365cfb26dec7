"""What a skill or command says when it is invoked: its body with the arguments and variables
substituted and its `!` shell commands replaced by their output.

Claude Code's rules (https://code.claude.com/docs/en/skills, "Available string
substitutions" and "Inject dynamic context"), all in ONE pass over the body, so an argument's
value or a command's output is never expanded again:

- `$ARGUMENTS`: the arguments as typed. `$ARGUMENTS[N]` and its shorthand `$N`: the N-th
  argument, counted from 0 (`$0` is the first, `$1` the second), split like a shell line
  (`"hello world" second` is two arguments); an index with no argument stays as written.
- `$name`: the argument at the position of `name` in the `arguments` front matter field (an
  empty string when there is no such argument).
- `${CLAUDE_SKILL_DIR}`, `${CLAUDE_SESSION_ID}`, and in a plugin's files
  `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}`.
- `\\$1` (one backslash) is the literal text `$1`; any other backslashes stay and the
  placeholder still expands.
- When no argument placeholder took the arguments, they are appended as `ARGUMENTS: <value>`,
  so what the user typed is never lost.
- `` !`command` `` where the `!` starts a line or follows whitespace, and a fenced block
  opened by ` ```! `, run before the text reaches the model; the output replaces them.
  They run as Bash tool calls of the session (`skills.shell`): deny and ask rules, the mode,
  PreToolUse hooks and the sandbox apply, and a command that is refused is not run — the text
  says so instead. With the settings' `disableSkillShellExecution` none runs: each is
  replaced by `[shell command execution disabled by policy]`, Claude Code's text.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

_PLACEHOLDER = re.compile(
    r"(?P<slashes>\\*)\$(?:"
    r"ARGUMENTS\[(?P<bracket>\d+)\]"
    r"|(?P<all>ARGUMENTS)(?![A-Za-z0-9_\[])"
    r"|(?P<index>\d+)"
    r"|\{(?P<var>[A-Z][A-Z0-9_]*)\}"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r")"
)
_FENCED = re.compile(r"^```![ \t]*\r?\n(?P<command>.*?)^```[ \t]*$", re.M | re.S)
_INLINE = re.compile(r"(?:^|(?<=\s))!`(?P<command>[^`\n]+)`", re.M)
DISABLED_BY_POLICY = "[shell command execution disabled by policy]"
"""What stands for a `!` command under `disableSkillShellExecution` (Claude Code's words)."""


@dataclass(frozen=True, slots=True)
class ShellResult:
    """A `!` command's outcome: its output, or why it did not run."""

    ran: bool
    text: str


ShellRunner = Callable[[str], Awaitable[ShellResult]]
"""Runs one `!` command under the session's rules (`skills.shell.thread_shell`)."""


def split_arguments(args: str) -> list[str]:
    """The arguments one by one, split as a shell would (quotes group words); a line whose
    quotes do not balance is split on whitespace."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def substitute(
    body: str,
    args: str,
    *,
    names: Sequence[str] = (),
    variables: Mapping[str, str] | None = None,
) -> str:
    """`body` with its placeholders replaced in one pass (see the module docstring)."""
    args = args.strip()
    positional = split_arguments(args)
    named = {name: i for i, name in enumerate(names)}
    known = variables or {}
    took_arguments = False

    def replace(m: re.Match[str]) -> str:
        nonlocal took_arguments
        slashes, token = m.group("slashes"), m.group(0)[len(m.group("slashes")) :]
        value: str | None
        if m.group("all") is not None:
            value = args
        elif m.group("bracket") is not None or m.group("index") is not None:
            index = int(m.group("bracket") or m.group("index"))
            value = positional[index] if index < len(positional) else None
        elif m.group("var") in known:
            value = known[m.group("var")]
        elif m.group("name") in named:
            at = named[m.group("name")]
            value = positional[at] if at < len(positional) else ""
        else:
            return m.group(0)  # not a placeholder: `$HOME`, `${PATH}` stay for the shell
        if len(slashes) == 1:
            return token  # `\$1` is the literal text `$1`
        if value is None:
            return m.group(0)  # an index with no argument stays as written
        took_arguments = took_arguments or m.group("var") is None
        return slashes + value

    expanded = _PLACEHOLDER.sub(replace, body)
    if args and not took_arguments:
        expanded = f"{expanded.rstrip()}\n\nARGUMENTS: {args}"
    return expanded


def shell_commands(body: str) -> list[str]:
    """The `!` commands of a body, in order (for tests and listings)."""
    return [m.group("command").strip() for m in _shell_matches(body)]


async def run_shell(body: str, runner: ShellRunner | None, *, disabled: bool = False) -> str:
    """`body` with each `!` command replaced by its output (or by why it was not run), the
    commands run one after another in the order they appear; `disabled`: none runs."""
    pieces: list[str] = []
    position = 0
    for match in _shell_matches(body):
        command = match.group("command").strip()
        if disabled:
            shown = DISABLED_BY_POLICY
        elif runner is None:
            shown = _shown(command, ShellResult(False, "no shell is available here"))
        else:
            shown = _shown(command, await runner(command))
        pieces += [body[position : match.start()], shown]
        position = match.end()
    pieces.append(body[position:])
    return "".join(pieces)


def _shell_matches(body: str) -> list[re.Match[str]]:
    fenced = list(_FENCED.finditer(body))
    inline = [
        m
        for m in _INLINE.finditer(body)
        if not any(f.start() <= m.start() < f.end() for f in fenced)
    ]
    return sorted([*fenced, *inline], key=lambda m: m.start())


def _shown(command: str, result: ShellResult) -> str:
    if result.ran:
        return result.text.rstrip("\n")
    return f"[the command `{command}` was not run: {result.text}]"
