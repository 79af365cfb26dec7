"""The REPL's memory commands: a `# line` adds to a memory file, `/memory` shows and adds.

# always run the tests with -q      asks: project or user memory? then appends the line
/memory                             the memory files this session reads
/memory project|user TEXT           adds TEXT to that file without asking
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .host import CommandHost

SCOPE_WORDS = {"p": "project", "project": "project", "": "project", "u": "user", "user": "user"}


async def memory_shortcut(host: CommandHost, text: str) -> bool:
    """`# text`: ask where to save it, then save it (Enter = project memory)."""
    from ..context.memory_edit import memory_path

    home = host.agent.home
    cwd = host.cwd
    project, user = memory_path("project", cwd, home), memory_path("user", cwd, home)
    question = f"Save to [p]roject memory ({project}) or [u]ser memory ({user})? > "
    try:
        answer = (await host.read_line(question)).strip().lower()
    except (EOFError, KeyboardInterrupt):
        answer = "cancel"
    scope = SCOPE_WORDS.get(answer)
    if scope is None:
        host.console.print("[dim]Not saved.[/]")
        return True
    _add(host, text, scope)
    return True


async def memory_command(host: CommandHost, arg: str) -> bool:
    """/memory [project|user TEXT]."""
    head, _, rest = arg.partition(" ")
    if head in ("project", "user") and rest.strip():
        _add(host, rest, head)
        return True
    if arg:
        host.console.print("[red]usage: /memory, or /memory project|user TEXT[/]")
        return True
    files = host.agent.memory_files()
    nested = host.agent.nested_memory_files()
    if not files and not nested:
        host.console.print("[dim]No memory files yet. Add a line with `# text`.[/]")
    for f in files:
        host.console.print(f"  {f.path} [dim]({f.level})[/]", highlight=False)
    for path in nested:
        host.console.print(f"  {path} [dim](nested, attached when its folder was used)[/]",
                           highlight=False)  # fmt: skip
    host.console.print("[dim]`# text` adds a line; /memory project|user TEXT too.[/]")
    return True


def _add(host: CommandHost, text: str, scope: str) -> None:
    try:
        path = host.agent.add_memory(text, scope)
    except (OSError, ValueError) as exc:
        host.console.print(f"[red]Could not save to memory: {exc}[/]")
        return
    host.console.print(f"[dim]Saved to {scope} memory ({path}).[/]", highlight=False)
