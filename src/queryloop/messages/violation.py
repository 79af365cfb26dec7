"""`Violation`: one broken Messages API rule (shared by the validator's modules)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: a stable `rule` id, a message, and where (`path`, JSONPath-like)."""

    rule: str
    message: str
    path: str = ""
