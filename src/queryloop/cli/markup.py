"""Text shown through rich's markup, escaped so `[` in it is never read as a style tag.

Its own tiny module: the slash commands and the type-ahead import it at start-up, and rich
loads only when something is shown."""

from __future__ import annotations


def escape_markup(text: str) -> str:
    """`text` with rich markup escaped (`[red]` is shown, not applied)."""
    from rich.markup import escape

    return escape(text)
