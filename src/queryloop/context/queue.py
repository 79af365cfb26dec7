"""Prompts the user queued while a turn runs (seeds 16.3, phase 2: `queued_commands`).

The REPL (what is typed while the agent works) and the SDK (`Agent.queue(...)`) put prompts
here. At the next tool-result boundary the loop's attachment phase drains the queue, and each
prompt reaches the model as a `queued_command` attachment ("The user sent the following
message while you were working: ..."), in the same turn. A prompt still queued when the turn
ends is taken with `take()` and becomes the next prompt. Only the main thread drains it:
sub-agents never see the user's queued input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..messages.types import now_iso


@dataclass(frozen=True, slots=True)
class QueuedPrompt:
    """One queued prompt and when it was typed."""

    text: str
    queued_at: str = field(default_factory=now_iso)


class PromptQueue:
    """A first-in first-out queue of prompts. Used from one event loop (not thread-safe)."""

    def __init__(self, on_change: Callable[[list[QueuedPrompt]], None] | None = None) -> None:
        self._items: list[QueuedPrompt] = []
        self.on_change = on_change
        """Called with the queue after every change (a UI's "queued" indicator)."""

    def __len__(self) -> int:
        return len(self._items)

    @property
    def items(self) -> list[QueuedPrompt]:
        """A copy of what is queued, oldest first."""
        return list(self._items)

    def put(self, text: str) -> QueuedPrompt | None:
        """Queue a prompt (blank text is ignored: None)."""
        if not text.strip():
            return None
        item = QueuedPrompt(text.strip())
        self._items.append(item)
        self._changed()
        return item

    def drain(self) -> list[str]:
        """Everything queued, oldest first, leaving the queue empty."""
        texts = [item.text for item in self._items]
        if texts:
            self._items.clear()
            self._changed()
        return texts

    def take(self) -> str | None:
        """Everything queued as one prompt (paragraphs in typing order), or None."""
        texts = self.drain()
        return "\n\n".join(texts) if texts else None

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change(self.items)
