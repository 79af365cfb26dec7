"""How text meets a rich console: markup escaped, and whether the console is animated.

Its own tiny module: the slash commands, the type-ahead and the REPL's first prompt use it at
start-up, and rich loads only when something is shown."""

from __future__ import annotations

from typing import Any


def escape_markup(text: str) -> str:
    """`text` with rich markup escaped (`[red]` is shown, not applied)."""
    from rich.markup import escape

    return escape(text)


def is_animated(console: Any) -> bool:
    """Whether `console` takes spinners, live text and a full line editor: a real terminal
    that is not dumb. Elsewhere (a dumb terminal, a pipe) output is plain lines."""
    return bool(console.is_terminal) and not console.is_dumb_terminal
