"""Hook configuration: events, matchers and the hooks (shell commands or Python callables).

The settings shape is Claude Code's::

    {"hooks": {"PreToolUse": [
        {"matcher": "Bash|Edit",
         "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]}}

In the SDK the same events take Python callables::

    HooksConfig.of(PreToolUse=[HookMatcher("Bash", [my_hook])])

A callable receives the event as a dict (the same JSON a shell hook reads on stdin) and returns
None or a dict shaped like a shell hook's stdout JSON; it may be sync or async.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeAlias

DEFAULT_HOOK_TIMEOUT = 60.0


class HookEvent(StrEnum):
    """The hook events (Claude Code's names)."""

    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    STOP = "Stop"
    SUBAGENT_START = "SubagentStart"
    SUBAGENT_STOP = "SubagentStop"
    SESSION_START = "SessionStart"
    PRE_COMPACT = "PreCompact"


HookCallable: TypeAlias = Callable[
    [dict[str, Any]], "Awaitable[Mapping[str, Any] | None] | Mapping[str, Any] | None"
]
"""A Python hook: gets the event dict, returns None or a Claude-Code-shaped output dict."""


@dataclass(frozen=True, slots=True)
class CommandHook:
    """A shell command run with the event JSON on stdin."""

    command: str
    timeout: float = DEFAULT_HOOK_TIMEOUT
    source: str = ""
    """The settings file it came from (for notices and warnings)."""

    @property
    def label(self) -> str:
        """How warnings name this hook."""
        return self.command


@dataclass(frozen=True, slots=True)
class CallableHook:
    """A Python callable hook."""

    fn: HookCallable
    timeout: float = DEFAULT_HOOK_TIMEOUT

    @property
    def label(self) -> str:
        """How warnings name this hook."""
        return getattr(self.fn, "__qualname__", repr(self.fn))


Hook: TypeAlias = CommandHook | CallableHook


@dataclass(frozen=True)
class HookMatcher:
    """Hooks that run when `matcher` matches the event's target (tool name, source, trigger).

    `matcher`: empty or `*` matches everything; `Bash` exactly that; `Edit|Write` alternatives;
    anything else is a regular expression that must match the whole name (`mcp__.*`).
    Plain callables in `hooks` are wrapped in `CallableHook`.
    """

    matcher: str = ""
    hooks: Sequence[Hook | HookCallable] = ()
    _regex: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        wrapped = tuple(
            h if isinstance(h, CommandHook | CallableHook) else CallableHook(h) for h in self.hooks
        )
        object.__setattr__(self, "hooks", wrapped)
        object.__setattr__(self, "_regex", compile_matcher(self.matcher))

    def matches(self, target: str | None) -> bool:
        """True when this matcher selects `target` (None: events without a target)."""
        if self.matcher in ("", "*") or target is None:
            return True
        return self._regex is not None and self._regex.fullmatch(target) is not None


def compile_matcher(matcher: str) -> re.Pattern[str] | None:
    """The regex for a matcher; raises re.error for an invalid one."""
    if matcher in ("", "*"):
        return None
    return re.compile(matcher)


@dataclass(frozen=True)
class HooksConfig:
    """Matchers per event, in the order they were configured (user, project, local, SDK)."""

    events: Mapping[HookEvent, tuple[HookMatcher, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, **events: Iterable[HookMatcher | HookCallable]) -> HooksConfig:
        """SDK constructor: `HooksConfig.of(Stop=[fn], PreToolUse=[HookMatcher("Bash", [fn])])`."""
        parsed: dict[HookEvent, tuple[HookMatcher, ...]] = {}
        for name, items in events.items():
            event = HookEvent(name)
            parsed[event] = tuple(
                m if isinstance(m, HookMatcher) else HookMatcher("", [m]) for m in items
            )
        return cls(parsed)

    def merged(self, other: HooksConfig) -> HooksConfig:
        """Both configs' matchers, self's first."""
        events = dict(self.events)
        for event, matchers in other.events.items():
            events[event] = events.get(event, ()) + matchers
        return HooksConfig(events)

    def hooks_for(self, event: HookEvent, target: str | None = None) -> list[Hook]:
        """Every hook whose matcher selects `target`, in configuration order."""
        found: list[Hook] = []
        for matcher in self.events.get(event, ()):
            if matcher.matches(target):
                found.extend(h for h in matcher.hooks if isinstance(h, CommandHook | CallableHook))
        return found

    def count(self) -> int:
        """How many hooks are configured in total."""
        return sum(len(m.hooks) for ms in self.events.values() for m in ms)

    def describe(self) -> list[str]:
        """One line per hook (`PreToolUse[Bash]: ./check.sh`) for notices."""
        lines: list[str] = []
        for event, matchers in self.events.items():
            for m in matchers:
                for h in m.hooks:
                    label = h.label if isinstance(h, CommandHook | CallableHook) else repr(h)
                    lines.append(f"{event.value}[{m.matcher or '*'}]: {label}")
        return lines


def parse_hooks(raw: object, *, source: str) -> tuple[HooksConfig, list[str]]:
    """Parse a settings file's `hooks` value; returns the config and problems found.

    A bad entry is skipped with a problem message naming the file, the event and the fix; the
    rest of the file's hooks still load.
    """
    problems: list[str] = []
    if not isinstance(raw, Mapping):
        return HooksConfig(), [f"{source}: 'hooks' must be an object mapping event names to lists"]
    events: dict[HookEvent, tuple[HookMatcher, ...]] = {}
    valid = ", ".join(e.value for e in HookEvent)
    for name, entries in raw.items():
        try:
            event = HookEvent(name)
        except ValueError:
            problems.append(f"{source}: unknown hook event {name!r} (known: {valid})")
            continue
        if not isinstance(entries, list):
            problems.append(f"{source}: hooks.{name} must be a list of {{matcher, hooks}} objects")
            continue
        matchers = [m for e in entries if (m := _parse_matcher(e, name, source, problems))]
        events[event] = tuple(matchers)
    return HooksConfig(events), problems


def _parse_matcher(
    entry: object, event: str, source: str, problems: list[str]
) -> HookMatcher | None:
    where = f"{source}: hooks.{event}"
    if not isinstance(entry, Mapping):
        problems.append(f"{where}: each entry must be an object with 'matcher' and 'hooks'")
        return None
    matcher = entry.get("matcher", "")
    if not isinstance(matcher, str):
        problems.append(f"{where}: 'matcher' must be a string, got {matcher!r}")
        return None
    try:
        compile_matcher(matcher)
    except re.error as exc:
        problems.append(f"{where}: matcher {matcher!r} is not a valid regex ({exc})")
        return None
    if not isinstance(entry.get("hooks"), list):
        problems.append(f'{where}: \'hooks\' must be a list of {{"type": "command", ...}}')
        return None
    hooks: list[Hook] = []
    for item in _list(entry.get("hooks")):
        hook = _parse_command(item, where, source, problems)
        if hook is not None:
            hooks.append(hook)
    return HookMatcher(matcher, hooks) if hooks else None


def _parse_command(
    item: object, where: str, source: str, problems: list[str]
) -> CommandHook | None:
    if not isinstance(item, Mapping) or item.get("type", "command") != "command":
        problems.append(f'{where}: each hook must be {{"type": "command", "command": ...}}')
        return None
    command, timeout = item.get("command"), item.get("timeout", DEFAULT_HOOK_TIMEOUT)
    if not isinstance(command, str) or not command.strip():
        problems.append(f"{where}: hook 'command' must be a non-empty string")
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        problems.append(f"{where}: hook 'timeout' must be a positive number of seconds")
        return None
    return CommandHook(command, float(timeout), source)


def _list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []
