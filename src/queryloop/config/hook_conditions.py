"""A hook handler's `if` (`"if": "Bash(git *)"`) as a `HookCondition`, by the permission
rules' own matcher: one rule syntax, one matcher (`permissions.rules`).

Claude Code evaluates `if` like a deny rule: a Bash pattern runs the hook when ANY command
of the line matches (`npm test && git push` matches `Bash(git *)`, so do `$(...)` and
backticks), and it fails open, running the hook, when the line cannot be parsed
(https://code.claude.com/docs/en/hooks, "Common fields"). File patterns match the tool's
path resolved against the working directory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..permissions.modes import FILE_TOOLS
from ..permissions.rules import MatchContext, PermissionRule, RuleSet

_SUBJECT_KEYS = ("command", "file_path", "notebook_path", "path", "url")
"""The input fields the permission checker takes a call's subject from, in its order."""


@dataclass(frozen=True)
class RuleCondition:
    """`hooks.HookCondition` over one permission rule."""

    rule: PermissionRule

    @classmethod
    def parse(cls, text: str, *, source: str = "hooks", root: Path | None = None) -> RuleCondition:
        """The condition for `text`; raises ValueError for a rule that does not parse."""
        try:
            return cls(PermissionRule.parse(text, "deny", source=source, root=root))
        except ConfigError as exc:
            raise ValueError(str(exc)) from exc

    def matches(self, tool_name: str, tool_input: Mapping[str, Any], cwd: Path) -> bool:
        """True when the call matches the rule, or the rule cannot tell (fail open)."""
        if not self.rule.applies_to(tool_name):
            return False
        subject = _subject(tool_name, tool_input, cwd)
        rules = RuleSet(deny=(self.rule,))
        if rules.find("deny", tool_name, subject, MatchContext(cwd, Path.home())) is not None:
            return True
        return tool_name == "Bash" and subject is not None and rules.doubt(subject) is not None

    def __str__(self) -> str:
        return str(self.rule)


def _subject(tool_name: str, tool_input: Mapping[str, Any], cwd: Path) -> str | None:
    for key in _SUBJECT_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            if tool_name in FILE_TOOLS:
                path = Path(value).expanduser()
                return str(path if path.is_absolute() else cwd / path)
            return value
    return str(cwd) if tool_name in FILE_TOOLS else None
