"""The front matter fields that change how a skill or command runs, as Claude Code reads them
(https://code.claude.com/docs/en/skills, "Frontmatter reference"):

- `argument-hint`: text shown after `/name` in /help and Tab completion;
- `arguments`: names for positional arguments (`$name`), a YAML list or a space-separated
  string;
- `allowed-tools`: tools usable without asking during the prompt that invokes it (a YAML
  list, or rules separated by commas or spaces: `Read, Bash(git add:*)`);
- `model`: the model of the prompt that invokes it (`inherit`: the session's);
- `disable-model-invocation`: `true` — only the user may invoke it (`/name`); it is not
  offered to the model;
- `user-invocable`: `false` — only the model may invoke it; hidden from /help and Tab.

Booleans also accept `yes`/`no`, `on`/`off`, `1`/`0` in any case (Claude Code's reading).
An `allowed-tools` entry that is not a valid permission rule is dropped with a warning:
dropping a grant never gives anything more.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..permissions.rules import PermissionRule

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


@dataclass(frozen=True, slots=True)
class SkillOptions:
    """What a skill's front matter says about running it (all optional)."""

    argument_hint: str = ""
    arguments: tuple[str, ...] = ()
    allowed_tools: tuple[PermissionRule, ...] = ()
    """Allow rules granted while the skill runs (`permissions.grants`)."""
    model: str | None = None
    disable_model_invocation: bool = False
    user_invocable: bool = True
    warnings: tuple[str, ...] = ()
    """Entries that were dropped, and why."""


def parse_options(
    meta: Mapping[str, Any], variables: Mapping[str, str] | None = None, *, source: str = ""
) -> SkillOptions:
    """The options of a front matter; `variables` (`${CLAUDE_PLUGIN_ROOT}`, ...) are
    substituted in `allowed-tools` first, as Claude Code does for a plugin's rules."""
    rules, warnings = _allowed_tools(meta.get("allowed-tools"), variables or {}, source)
    model = _text(meta.get("model")).strip() or None
    return SkillOptions(
        argument_hint=_hint(meta.get("argument-hint")),
        arguments=tuple(_words(meta.get("arguments"))),
        allowed_tools=rules,
        model=None if model == "inherit" else model,
        disable_model_invocation=_flag(meta.get("disable-model-invocation"), default=False),
        user_invocable=_flag(meta.get("user-invocable"), default=True),
        warnings=tuple(warnings),
    )


def split_rules(value: str) -> list[str]:
    """Rules written in one string, separated by commas or whitespace outside parentheses
    (`Read Bash(git add *), Edit` is three rules)."""
    rules, current, depth = [], "", 0
    for char in value:
        if char in ",\n\t " and depth == 0:
            if current.strip():
                rules.append(current.strip())
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    if current.strip():
        rules.append(current.strip())
    return rules


def _allowed_tools(
    value: Any, variables: Mapping[str, str], source: str
) -> tuple[tuple[PermissionRule, ...], list[str]]:
    texts = _words(value, split=split_rules)
    rules: list[PermissionRule] = []
    warnings: list[str] = []
    for text in texts:
        for name, replacement in variables.items():
            text = text.replace("${" + name + "}", replacement)
        try:
            rules.append(PermissionRule.parse(text, "allow", source=source or "allowed-tools"))
        except ConfigError as exc:
            warnings.append(f"allowed-tools entry {text!r} was dropped: {exc}")
    return tuple(rules), warnings


def _words(value: Any, *, split: Callable[[str], list[str]] = str.split) -> list[str]:
    """A YAML list, or one string split into words."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    return list(split(str(value)))


def _hint(value: Any) -> str:
    """`argument-hint: [pr-number]` is a YAML list; Claude Code shows it as written."""
    if isinstance(value, list):
        return " ".join(f"[{v}]" for v in value)
    return _text(value).strip()


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _flag(value: Any, *, default: bool) -> bool:
    if isinstance(value, bool):
        return value
    text = _text(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return default
