"""The Anthropic Messages API's request rules, checked locally.

(Contract placeholder: the rule set is being written; signature and Violation are fixed.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: a stable `rule` id, a message, and where (`path`, JSONPath-like)."""

    rule: str
    message: str
    path: str = ""


def validate_api_request(request: Mapping[str, Any]) -> list[Violation]:
    """Every rule the request body breaks; an empty list means the API should accept it."""
    return []
