"""The REPL's memory commands: a `# line` adds to a memory file, `/memory` shows and adds.

# always run the tests with -q      asks: project or user memory? then appends the line
/memory                             the memory files this session reads
/memory project|user TEXT           adds TEXT to that file without asking
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .repl import Repl

SCOPE_WORDS = {"p": "project", "project": "project", "": "project", "u": "user", "user": "user"}


async def memory_shortcut(repl: Repl, text: str) -> bool:
    """`# text`: ask where to save it, then save it (Enter = project memory)."""
    from ..context.memory_edit import memory_path

    home = repl.agent.home
    cwd = repl.options.cwd
    project, user = memory_path("project", cwd, home), memory_path("user", cwd, home)
    question = f"Save to [p]roject memory ({project}) or [u]ser memory ({user})? > "
    try:
        answer = (await repl.read_line(question)).strip().lower()
    except (EOFError, KeyboardInterrupt):
        answer = "cancel"
    scope = SCOPE_WORDS.get(answer)
    if scope is None:
        repl.console.print("[dim]Not saved.[/]")
        return True
    _add(repl, text, scope)
    return True


async def memory_command(repl: Repl, arg: str) -> bool:
    """/memory [project|user TEXT]."""
    head, _, rest = arg.partition(" ")
    if head in ("project", "user") and rest.strip():
        _add(repl, rest, head)
        return True
    if arg:
        repl.console.print("[red]usage: /memory, or /memory project|user TEXT[/]")
        return True
    files = repl.agent.memory_files()
    nested = repl.agent.nested_memory_files()
    if not files and not nested:
        repl.console.print("[dim]No memory files yet. Add a line with `# text`.[/]")
    for f in files:
        repl.console.print(f"  {f.path} [dim]({f.level})[/]", highlight=False)
    for path in nested:
        repl.console.print(f"  {path} [dim](nested, attached when its folder was used)[/]",
                           highlight=False)  # fmt: skip
    repl.console.print("[dim]`# text` adds a line; /memory project|user TEXT too.[/]")
    return True


def _add(repl: Repl, text: str, scope: str) -> None:
    try:
        path = repl.agent.add_memory(text, scope)
    except (OSError, ValueError) as exc:
        repl.console.print(f"[red]Could not save to memory: {exc}[/]")
        return
    repl.console.print(f"[dim]Saved to {scope} memory ({path}).[/]", highlight=False)
