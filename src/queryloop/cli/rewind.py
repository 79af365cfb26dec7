"""`/rewind` in the REPL and the headless `queryloop rewind` subcommand.

    /rewind                      list the prompts, ask which one and what to restore
    /rewind 3 code               restore the files to before prompt 3, keep the conversation
    queryloop rewind             list the checkpoints of this folder's latest session
    queryloop rewind 3 [--code | --conversation] [--session ID]

Restoring the conversation removes that prompt and everything after it; in the REPL the
prompt's text comes back into the input line to edit or resend. Changes made through Bash
are not tracked: every place where the user chooses says so.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .exit_codes import ExitCode

if TYPE_CHECKING:
    from ..checkpoints import Checkpoint, RewindMode
    from .host import CommandHost

MODE_WORDS = {
    "b": "both", "both": "both", "": "both",
    "c": "code", "code": "code",
    "o": "conversation", "conversation": "conversation", "conv": "conversation",
}  # fmt: skip


def checkpoint_lines(checkpoints: list[Checkpoint]) -> list[str]:
    """One line per checkpoint: number, time, files changed, the prompt."""
    lines: list[str] = []
    for c in checkpoints:
        when = c.timestamp[11:16] if len(c.timestamp) >= 16 else c.timestamp
        files = len(c.files)
        prompt = " ".join(c.prompt.split())[:70]
        lines.append(f"{c.number:>3}  {when}  {files:>2} file(s)  {prompt}")
    return lines


def parse_mode(word: str) -> RewindMode | None:
    """`b`/`both`, `c`/`code`, `o`/`conversation` (None for anything else)."""
    from ..checkpoints import RewindMode

    value = MODE_WORDS.get(word.strip().lower())
    return RewindMode(value) if value else None


async def rewind_command(host: CommandHost, arg: str) -> bool:
    """The /rewind slash command."""
    from ..checkpoints import BASH_NOTE, RewindError

    checkpoints = host.agent.checkpoints()
    if not checkpoints:
        host.console.print("[dim]No checkpoints yet: each prompt makes one.[/]")
        return True
    number, _, mode_word = arg.partition(" ")
    if not number:
        for line in checkpoint_lines(checkpoints):
            host.console.print(f"  {line}", markup=False, highlight=False)
        number = await _ask(host, "Rewind to before which prompt? (number, Enter cancels) > ")
        if not number:
            return True
        host.console.print(f"[yellow]{BASH_NOTE}[/]")
        mode_word = await _ask(
            host, "Restore [b]oth code and conversation, [c]ode only, c[o]nversation only, "
            "or [n]evermind? > ",
        )  # fmt: skip
        if mode_word.lower() in ("n", "no", "nevermind"):
            return True
    mode = parse_mode(mode_word)
    if mode is None or not number.isdigit():
        host.console.print("[red]usage: /rewind [N [both|code|conversation]][/]")
        return True
    try:
        outcome = await host.agent.rewind(int(number), mode)
    except RewindError as exc:
        host.console.print(f"[red]{exc}[/]")
        return True
    from ..checkpoints import describe

    host.console.print(f"[dim]Rewound: {describe(outcome)}[/] [yellow]{BASH_NOTE}[/]")
    if mode.conversation:
        host.prefill(outcome.prompt)
        host.console.print(f"[dim]The prompt is back in the input: {outcome.prompt}[/]",
                           markup=True, highlight=False)  # fmt: skip
    return True


async def _ask(host: CommandHost, question: str) -> str:
    try:
        return (await host.read_line(question)).strip()
    except (EOFError, KeyboardInterrupt):
        return ""


def rewind_parser() -> argparse.ArgumentParser:
    """`queryloop rewind`'s arguments."""
    from .args import _Parser

    p = _Parser(
        prog="queryloop rewind",
        description="List the checkpoints of this folder's latest session (one per prompt), "
        "or restore the files and/or the conversation to before prompt N. Changes made "
        "through Bash are not tracked.",
    )
    p.add_argument(
        "number",
        nargs="?",
        type=_prompt_number,
        metavar="N",
        help="the prompt to rewind to before (default: list the checkpoints)",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--code",
        dest="mode",
        action="store_const",
        const="code",
        help="restore the files only, keep the conversation",
    )
    what.add_argument(
        "--conversation",
        dest="mode",
        action="store_const",
        const="conversation",
        help="remove prompt N and what follows, keep the files",
    )
    what.add_argument(
        "--both", dest="mode", action="store_const", const="both", help="both (the default)"
    )
    p.add_argument("--session", metavar="ID", help="a session id or id prefix (default: latest)")
    p.add_argument("--cwd", type=Path, help="the project folder whose sessions to look in")
    p.add_argument("--verbose", action="store_true")
    return p  # fmt: skip


def _prompt_number(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a prompt number")
    return int(text)


def print_rewind(args: Sequence[str], out: TextIO) -> int:
    """`queryloop rewind [N] [--code|--conversation] [--session ID] [--cwd PATH]`."""
    from ..checkpoints import BASH_NOTE, RewindError, describe, rewind_transcript
    from .args import UsageError, _resolve_cwd
    from .ops import stored_session

    ns = rewind_parser().parse_args(list(args))
    cwd = _resolve_cwd(ns.cwd)
    mode = parse_mode(ns.mode or "both")
    assert mode is not None  # argparse allows only the mode words
    with stored_session(cwd, ns.session) as ref:
        if ref is None:
            raise UsageError(f"no session in {cwd} to rewind")
        session_id = ref.session_id
        try:
            store, outcome = rewind_transcript(ref, ns.number, mode)
        except RewindError as exc:
            raise UsageError(str(exc)) from None
    if outcome is None:
        checkpoints = store.checkpoints()
        out.write(f"checkpoints of session {session_id}:\n" if checkpoints else
                  f"no checkpoints in session {session_id}\n")  # fmt: skip
        for line in checkpoint_lines(checkpoints):
            out.write(f"  {line}\n")
        out.write(f"\nrewind with: queryloop rewind N [--code | --conversation]\n{BASH_NOTE}\n")
        return ExitCode.OK
    out.write(f"rewound session {session_id}: {describe(outcome)}\n{BASH_NOTE}\n")
    if outcome.mode.conversation:
        out.write(f"the prompt was: {outcome.prompt}\ncontinue with: queryloop --resume "
                  f"{session_id}\n")  # fmt: skip
    return ExitCode.OK
