"""`Violation`: one broken Messages API rule (shared by the validator's modules)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    """How the API treats a request that breaks a rule.

    `ERROR`: the API answers 400 invalid_request_error. `WARNING`: the API accepts the
    request (it merges, ignores or degrades something); worth knowing, never a reason to
    block a request.
    """

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: a stable `rule` id, a message, where (`path`, JSONPath-like), and
    its `severity` (an error unless the API is documented to accept the request)."""

    rule: str
    message: str
    path: str = ""
    severity: Severity = Severity.ERROR

    @property
    def is_error(self) -> bool:
        """True when the API rejects a request that breaks this rule."""
        return self.severity is Severity.ERROR


def errors(violations: Iterable[Violation]) -> list[Violation]:
    """The violations the API rejects (warnings left out)."""
    return [v for v in violations if v.is_error]


def warnings(violations: Iterable[Violation]) -> list[Violation]:
    """The violations the API accepts."""
    return [v for v in violations if not v.is_error]


def warning(rule: str, message: str, path: str = "") -> Violation:
    """A `Violation` of severity WARNING."""
    return Violation(rule, message, path, Severity.WARNING)
