"""`ReadDenials`: what `Read` deny rules hide from Grep, Glob and LS, as a session service
(`tools.services.HiddenPaths`), built once over the session's permission context and put on
its tool context; the rules are read at each call (the REPL may change them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .context import PermissionContext
from .rules import MatchContext


@dataclass(frozen=True, slots=True)
class ReadDenials:
    """The `HiddenPaths` of a session: the `Read` deny rules of `context`."""

    context: PermissionContext

    def hides(self, cwd: Path) -> Callable[[Path], bool] | None:
        """True for a path a `Read` deny rule covers, relative patterns taken from `cwd`;
        None when no `Read` deny rule names anything."""
        rules = self.context.rules
        if not any(r.tool == "Read" and r.content for r in rules.deny):
            return None
        mc = MatchContext(cwd, self.context.home)
        return lambda path: rules.find("deny", "Read", str(path), mc) is not None
