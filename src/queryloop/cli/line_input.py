"""Reading the REPL's input lines: prompt_toolkit's session (history, multi-line editing,
completion, the status toolbar, Ctrl-C as a key) in a terminal, and a plain reader for dumb
terminals and pipes that keeps the same Ctrl-C, Ctrl-D and trailing-backslash behaviour."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from .interrupts import SigintRouter


async def plain_read_line(prompt: str, console: Any, router: SigintRouter | None = None) -> str:
    """Line input for dumb terminals: no editing, but Ctrl-C, Ctrl-D and trailing-backslash
    continuation behave as in the full prompt. Reads stdin from the event loop so that a
    SIGINT arrives as KeyboardInterrupt here, not at a random point in the loop."""

    lines: list[str] = []
    while True:
        console.print(prompt if not lines else "… ", end="", markup=False, highlight=False)
        console.file.flush()
        line = await _read_stdin_line(router or SigintRouter())
        if line == "":
            if lines:
                break
            raise EOFError
        line = line.rstrip("\n")
        if line.endswith("\\"):
            lines.append(line[:-1])
            continue
        lines.append(line)
        break
    return "\n".join(lines)


async def _read_stdin_line(router: SigintRouter) -> str:
    import sys

    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()

    def readable() -> None:
        if not done.done():
            done.set_result(sys.stdin.readline())

    def interrupted() -> None:
        if not done.done():
            done.set_exception(KeyboardInterrupt())

    fd = sys.stdin.fileno()
    loop.add_reader(fd, readable)
    owned = not router.active and router.install()
    try:
        with router.scope(interrupted):
            return await done
    finally:
        loop.remove_reader(fd)
        if owned:
            router.uninstall()


def prompt_session(
    cwd: Path,
    slash_commands: Callable[[], Mapping[str, Any]],
    ready: Callable[[], Awaitable[None]],
    toolbar: Callable[[], str],
) -> Any:
    """A prompt_toolkit session with history, multi-line editing and the status toolbar.
    Tab completes the built-in commands and `slash_commands()` (the session's skills and
    commands, known once `ready()` returns) and file mentions under `cwd`; `toolbar()` is
    the status line."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings

    from ..session import queryloop_home

    home = queryloop_home()
    home.mkdir(parents=True, exist_ok=True)
    bindings = KeyBindings()

    @bindings.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("enter")
    def _enter(event: Any) -> None:
        buffer = event.current_buffer
        if buffer.text.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    @bindings.add("c-c")
    def _ctrl_c(event: Any) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt())

    from .commands import COMMANDS
    from .completion import ReplCompleter, help_table

    return PromptSession(
        history=FileHistory(str(home / "history")),
        completer=ReplCompleter(
            cwd,
            lambda: help_table(COMMANDS.values(), slash_commands()),
            ready=ready,
            subcommands={c.name: c.subcommands for c in COMMANDS.values() if c.subcommands},
        ),
        complete_while_typing=False,
        key_bindings=bindings,
        bottom_toolbar=toolbar,
        multiline=False,
    )
