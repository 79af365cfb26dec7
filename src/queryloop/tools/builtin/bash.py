"""Bash: run a shell command; the working directory persists across calls."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ...sandbox.policy import SandboxUnavailableError
from ..base import BaseTool, ToolContext, ToolError, ToolProgress, ToolResult
from ..output import truncate_text
from ._common import StrictInput, field_of, is_inside_working_dirs
from ._shell import ShellOutcome, run_shell, trace_context_env
from .background import sandbox_writable, start_in_background

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
DEFAULT_TIMEOUT_VAR = "BASH_DEFAULT_TIMEOUT_MS"
MAX_TIMEOUT_VAR = "BASH_MAX_TIMEOUT_MS"
"""Claude Code's variables for the two (code.claude.com/docs/en/env-vars: "Default timeout
for long-running bash commands", "Maximum timeout the model can set for long-running bash
commands"), read from the environment and the settings' `env`."""
MAX_OUTPUT_CHARS = 30_000

READ_ONLY_COMMANDS = frozenset({"ls", "cat", "grep", "rg", "find", "head", "tail", "wc", "pwd"})
READ_ONLY_GIT = frozenset({"status", "diff", "log"})
SHELL_METACHARS = re.compile(r"[;&|<>$`(){}\n\\*?\[\]!~]")
COMPOUND = re.compile(r"[;&|\n`]|\$\(")
EXIT_1_IS_AN_ANSWER = frozenset({"grep", "rg", "diff", "cmp", "test"})
FIND_WRITERS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprintf", "-fprint0", "-fls"}
)
WRITING_OPTIONS = {
    "git": ("--output",),  # git-diff(1): `--output=<file>`, also `git log`'s
    "rg": ("--pre", "--hostname-bin"),  # rg(1): a program it runs
}
"""Options that make an allowlisted program write a file or run a program (`--output` and
`--output=F`; git and rg take no abbreviation of them)."""

DESCRIPTION = f"""Executes a bash command and returns its output (stdout, then stderr).

- The working directory persists between calls: `cd` changes it for later commands, but it
  cannot leave the session's working directories (it is reset if it does).
- Quote paths that contain spaces. Prefer absolute paths over `cd` when you can.
- timeout is in milliseconds: default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS} (unless
  the user set other limits). A command that runs longer is killed with all its child
  processes.
- Output longer than {MAX_OUTPUT_CHARS} characters is cut to its start and end.
- A non-zero exit code is reported as an error together with the output.
- Commands run non-interactively (stdin is empty): never use commands that wait for input.
- Prefer the Read, Glob, Grep and LS tools over cat, find, grep and ls, and Edit over sed.
- To run independent commands, call Bash several times in one response; to run dependent
  commands in sequence, chain them with `&&` in one call.
- description: say in 5-10 words what the command does.
- run_in_background: set to true for a long-running command (a server, a watcher, a slow
  build) whose result you do not need right away. The call returns at once with a task ID;
  read its output with TaskOutput, stop it with TaskStop; you are notified when it finishes.
  Do not use '&' for this."""


class BashInput(StrictInput):
    command: str = Field(description="The command to execute")
    timeout: int | None = Field(
        default=None,
        ge=1,
        description=f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS})",
    )
    description: str | None = Field(
        default=None, description="A clear, concise description of what this command does"
    )
    run_in_background: bool | None = Field(
        default=None,
        description="Set to true to run this command in the background. Use TaskOutput to "
        "read the output later.",
    )


def is_read_only_command(command: str) -> bool:
    """True for a plain read-only command: an allowlisted program, no shell metacharacters.

    Allowed programs: ls, cat, grep, rg, find (without -exec/-delete/...), head, tail, wc,
    pwd, and git status / diff / log, none given an option that writes (`git log
    --output=F`) or runs a program (`rg --pre CMD`). Anything else, or any of `;&|<>$()`
    braces, backticks, globs, makes the command unsafe (it then runs alone).
    """
    if not command.strip() or SHELL_METACHARS.search(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    program, args = words[0], words[1:]
    writing = WRITING_OPTIONS.get(program, ())
    if any(a.split("=", 1)[0] in writing for a in args):
        return False
    if program == "git":
        return bool(args) and args[0] in READ_ONLY_GIT
    if program == "find":
        return not FIND_WRITERS.intersection(args)
    return program in READ_ONLY_COMMANDS


class BashTool(BaseTool[BashInput]):
    """The Bash tool. Not concurrency-safe unless the command is plainly read-only."""

    name = "Bash"
    description = DESCRIPTION
    input_model: type[BaseModel] = BashInput
    cancels_siblings_on_error = True
    """A failing command cancels the calls running beside it (they often depend on it)."""

    def is_concurrency_safe(self, input: Any) -> bool:
        return is_read_only_command(str(field_of(input, "command", "")))

    def is_read_only(self, input: Any) -> bool:
        return self.is_concurrency_safe(input)

    def permission_subject(self, input: Any) -> str | None:
        return str(field_of(input, "command", "")) or None

    async def validate_input(self, input: Any, ctx: ToolContext) -> str | None:
        if not input.command.strip():
            return "InputValidationError: Bash failed: `command` is empty"
        longest = TimeoutLimits.of({**os.environ, **ctx.env}).max_ms
        if input.timeout is not None and input.timeout > longest:
            return (
                f"InputValidationError: Bash failed: `timeout` must be at most {longest} ms "
                f"(the user's {MAX_TIMEOUT_VAR} or the default)"
            )
        return None

    async def call(self, input: Any, ctx: ToolContext) -> AsyncIterator[ToolProgress | ToolResult]:
        env = {**os.environ, **ctx.env, "GIT_PAGER": "cat", "PAGER": "cat"}
        limits = TimeoutLimits.of(env)
        timeout_ms = input.timeout or limits.default_ms  # at most the maximum: validate_input
        env.update(trace_context_env())  # the call's span, when the session traces
        note = limits.problem
        if not ctx.cwd.is_dir() and ctx.original_cwd is not None:
            note = f"The working directory {ctx.cwd} no longer exists; using {ctx.original_cwd}"
            ctx.cwd = ctx.original_cwd
        if input.run_in_background:
            try:
                yield await start_in_background(input.command, input.description, ctx, env, note)
            except SandboxUnavailableError as exc:
                raise ToolError(str(exc)) from exc
            return
        started_in = ctx.cwd
        try:
            outcome = await run_shell(
                input.command, ctx.cwd, env, timeout_ms / 1000,
                sandbox=ctx.sandbox, working_dirs=sandbox_writable(ctx), guard=ctx.exec_guard,
            )  # fmt: skip
        except SandboxUnavailableError as exc:
            raise ToolError(str(exc)) from exc
        notes = [n for n in (note, _follow_cwd(ctx, outcome.final_cwd, started_in)) if n]
        yield _result(input.command, outcome, timeout_ms, "\n".join(notes))


@dataclass(frozen=True)
class TimeoutLimits:
    """A command's default and longest timeout, and what was wrong with the variables."""

    default_ms: int = DEFAULT_TIMEOUT_MS
    max_ms: int = MAX_TIMEOUT_MS
    problem: str = ""

    @classmethod
    def of(cls, env: Mapping[str, str]) -> TimeoutLimits:
        """From `BASH_DEFAULT_TIMEOUT_MS` and `BASH_MAX_TIMEOUT_MS` in `env`; a value that is
        not a positive number of milliseconds is not used, and `problem` says so. The default
        never exceeds the maximum."""
        values: dict[str, int] = {}
        problems: list[str] = []
        for name, fallback in (
            (DEFAULT_TIMEOUT_VAR, DEFAULT_TIMEOUT_MS),
            (MAX_TIMEOUT_VAR, MAX_TIMEOUT_MS),
        ):
            raw = env.get(name, "").strip()
            values[name] = fallback
            if raw:
                if raw.isdigit() and int(raw) > 0:
                    values[name] = int(raw)
                else:
                    problems.append(
                        f"{name}={raw!r} is not a number of milliseconds; using {fallback}"
                    )
        longest = values[MAX_TIMEOUT_VAR]
        return cls(min(values[DEFAULT_TIMEOUT_VAR], longest), longest, "; ".join(problems))


def _follow_cwd(ctx: ToolContext, final_cwd: str | None, started_in: Path) -> str:
    """Keep the shell's new directory if it is inside the working dirs; a note if reset."""
    if final_cwd is None or os.path.realpath(final_cwd) == os.path.realpath(started_in):
        return ""
    if is_inside_working_dirs(ctx, Path(os.path.realpath(final_cwd))):
        ctx.cwd = Path(final_cwd)
        return ""
    return f"Shell cwd was reset to {ctx.cwd} (it may not leave the working directories)"


def is_failure(command: str, exit_code: int | None) -> bool:
    """A non-zero exit is a failure, except exit 1 of a program that uses it to mean
    "no match" or "different" (grep, rg, diff, cmp, test) when it is the whole command."""
    if not exit_code:
        return False
    if exit_code == 1 and not COMPOUND.search(command):
        words = command.split()
        return not words or words[0] not in EXIT_1_IS_AN_ANSWER
    return True


def _result(command: str, outcome: ShellOutcome, timeout_ms: int, note: str) -> ToolResult:
    stdout = truncate_text(outcome.stdout.rstrip("\n"), MAX_OUTPUT_CHARS)
    stderr = truncate_text(outcome.stderr.rstrip("\n"), MAX_OUTPUT_CHARS)
    parts = [stdout]
    if outcome.stderr.strip():
        parts.append(stderr)
    if outcome.refusals:
        parts.append(outcome.refusals)
    code = outcome.exit_code
    if outcome.timed_out:
        parts.append(f"Command timed out after {timeout_ms} ms and was killed")
    elif code:
        parts.append(f"Exit code {code}")
    if note:
        parts.append(note)
    text = "\n".join(p for p in parts if p) or "(Command completed with no output)"
    return ToolResult(
        content=text,
        is_error=outcome.timed_out or is_failure(command, code),
        # PostToolUse hooks read this as `tool_response`: Claude Code's Bash fields
        # (stdout, stderr, interrupted) and queryloop's (exit_code, timed_out).
        data={
            "stdout": stdout,
            "stderr": stderr,
            "interrupted": outcome.timed_out,
            "exit_code": code,
            "timed_out": outcome.timed_out,
            "refused_programs": outcome.refusals.splitlines(),
        },
    )
