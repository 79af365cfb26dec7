"""Hook configuration: events, matcher groups and handlers (Claude Code's shapes).

The settings shape is Claude Code's::

    {"hooks": {"PreToolUse": [
        {"matcher": "Bash|Edit",
         "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]}}

Handlers: `command` (shell form, or exec form with `args`), `http` (POST the event JSON),
`prompt` (a small model decides, `{"ok": ..., "reason": ...}`) and, in the SDK, Python
callables::

    HooksConfig.of(PreToolUse=[HookMatcher("Bash", [my_hook])])

A callable receives the event as a dict (the same JSON a shell hook reads on stdin) and returns
None or a dict shaped like a shell hook's stdout JSON; it may be sync or async. Parsing a
settings file's `hooks` value is `hooks.parsing.parse_hooks`.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeAlias

from .events import (
    DEFAULT_TIMEOUT,
    NARROW_MATCHER,
    NO_MATCHER,
    PROMPT_TIMEOUT,
    SHORT_TIMEOUTS,
    HookEvent,
)

DEFAULT_HOOK_TIMEOUT = 60.0
"""Seconds a Python callable hook may take (Claude Code's SDK callback default)."""


class HookCondition(Protocol):
    """A handler's `if`: one permission rule (`Bash(git *)`) a tool call must match.

    The configuration layer builds it from `permissions.rules.PermissionRule` (hooks and
    permissions are siblings: neither imports the other)."""

    def matches(self, tool_name: str, tool_input: Mapping[str, Any], cwd: Path) -> bool:
        """True when the call matches the rule (or the rule cannot tell: fail open)."""
        ...


HookCallable: TypeAlias = Callable[
    [dict[str, Any]], "Awaitable[Mapping[str, Any] | None] | Mapping[str, Any] | None"
]
"""A Python hook: gets the event dict, returns None or a Claude-Code-shaped output dict."""


@dataclass(frozen=True, slots=True)
class CommandHook:
    """A command run with the event JSON on stdin: through `sh -c` (shell form), or, with
    `args`, the program `command` itself with that argument vector (exec form, no shell)."""

    command: str
    timeout: float | None = None
    """Seconds; None: Claude Code's default for the event (600, UserPromptSubmit 30)."""
    source: str = ""
    """The settings file it came from (for notices and warnings)."""
    args: tuple[str, ...] | None = None
    condition: HookCondition | None = None
    status_message: str | None = None
    once: bool = False
    run_async: bool = False
    """`async`: run in the background; its output reaches the model on the next turn."""
    shell: str | None = None
    """`shell`: "bash" (sh -c here) or "powershell"; ignored with `args`."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Added to the hook's environment: a plugin's `CLAUDE_PLUGIN_ROOT`/`CLAUDE_PLUGIN_DATA`
    (`config.plugins`), also substituted in exec-form arguments."""

    @property
    def label(self) -> str:
        """How warnings name this hook."""
        return " ".join([self.command, *self.args]) if self.args is not None else self.command


@dataclass(frozen=True, slots=True)
class HttpHook:
    """POST the event JSON to `url`; the response body is the hook's output."""

    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    """Values may name `$VAR`/`${VAR}` from `allowed_env_vars` (others become empty)."""
    allowed_env_vars: tuple[str, ...] = ()
    timeout: float | None = None
    source: str = ""
    condition: HookCondition | None = None
    status_message: str | None = None
    once: bool = False
    refused: str | None = None
    """Why this hook may not be called (a settings policy, `allowedHttpHookUrls`): when it
    would run, that is a non-blocking error instead of a request."""

    @property
    def label(self) -> str:
        """How warnings name this hook."""
        return f"POST {self.url}"


@dataclass(frozen=True, slots=True)
class PromptHook:
    """Ask a small model (`model`, else the session's fast model) to decide; `$ARGUMENTS`
    in `prompt` becomes the event JSON. The model answers `{"ok": bool, "reason": str}`."""

    prompt: str
    model: str | None = None
    timeout: float | None = None
    source: str = ""
    condition: HookCondition | None = None
    status_message: str | None = None
    once: bool = False
    continue_on_block: bool = False

    @property
    def label(self) -> str:
        """How warnings name this hook."""
        first = self.prompt.strip().splitlines()[0] if self.prompt.strip() else ""
        return f"prompt {first[:60]!r}"


@dataclass(frozen=True, slots=True)
class CallableHook:
    """A Python callable hook."""

    fn: HookCallable
    timeout: float = DEFAULT_HOOK_TIMEOUT

    @property
    def label(self) -> str:
        """How warnings name this hook."""
        return getattr(self.fn, "__qualname__", repr(self.fn))


Hook: TypeAlias = CommandHook | HttpHook | PromptHook | CallableHook
HOOK_TYPES = (CommandHook, HttpHook, PromptHook, CallableHook)


def timeout_of(hook: Hook, event: HookEvent) -> float:
    """The hook's timeout: its own, else Claude Code's default for its type and the event."""
    if hook.timeout is not None:
        return float(hook.timeout)
    if isinstance(hook, PromptHook):
        return PROMPT_TIMEOUT
    return SHORT_TIMEOUTS.get(event, DEFAULT_TIMEOUT)


@dataclass(frozen=True)
class HookMatcher:
    """Hooks that run when `matcher` selects the event's target (tool name, source, ...).

    Claude Code's rules: empty or `*` matches everything; only letters, digits, `_`, `-`,
    spaces, `,` and `|`: exact names separated by `|` or `,` (`Edit|Write`); anything else is
    an unanchored regular expression (`mcp__.*`, `^Notebook`). Plain callables in `hooks` are
    wrapped in `CallableHook`.
    """

    matcher: str = ""
    hooks: Sequence[Hook | HookCallable] = ()

    def __post_init__(self) -> None:
        wrapped = tuple(h if isinstance(h, HOOK_TYPES) else CallableHook(h) for h in self.hooks)
        object.__setattr__(self, "hooks", wrapped)
        compile_matcher(self.matcher)  # a bad regex fails here, not at the first event

    def matches(self, target: str | None, event: HookEvent | None = None) -> bool:
        """True when this matcher selects `target` (None: events without a target)."""
        if target is None or event in NO_MATCHER:
            return True
        test = compile_matcher(self.matcher, narrow=event in NARROW_MATCHER)
        return test is None or test(target)


_EXACT = re.compile(r"^[A-Za-z0-9_\- ,|]+$")
_EXACT_NARROW = re.compile(r"^[A-Za-z0-9_|]+$")


@lru_cache(maxsize=512)
def compile_matcher(matcher: str, *, narrow: bool = False) -> Callable[[str], bool] | None:
    """The test for a matcher (None: matches everything); raises re.error for a bad regex."""
    if matcher.strip() in ("", "*"):
        return None
    if (_EXACT_NARROW if narrow else _EXACT).match(matcher):
        names = frozenset(n.strip() for n in re.split(r"[|]" if narrow else r"[|,]", matcher))
        return lambda target: target in names
    regex = re.compile(matcher)
    return lambda target: regex.search(target) is not None


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

    def mapped(self, change: Callable[[Hook], Hook]) -> HooksConfig:
        """The same matchers with each handler passed through `change` (a settings policy
        applied to every hook, whatever its source)."""
        events = {
            event: tuple(
                HookMatcher(m.matcher, [change(h) for h in m.hooks if isinstance(h, HOOK_TYPES)])
                for m in matchers
            )
            for event, matchers in self.events.items()
        }
        return HooksConfig(events)

    def hooks_for(self, event: HookEvent, target: str | None = None) -> list[Hook]:
        """Every hook whose matcher selects `target`, in configuration order; the same
        command or URL configured in two files runs once (Claude Code's rule)."""
        found: list[Hook] = []
        for matcher in self.events.get(event, ()):
            if matcher.matches(target, event):
                found.extend(h for h in matcher.hooks if isinstance(h, HOOK_TYPES))
        return _dedupe(found)

    def count(self) -> int:
        """How many hooks are configured in total."""
        return sum(len(m.hooks) for ms in self.events.values() for m in ms)

    def describe(self) -> list[str]:
        """One line per hook (`PreToolUse[Bash]: ./check.sh`) for notices."""
        lines: list[str] = []
        for event, matchers in self.events.items():
            for m in matchers:
                for h in m.hooks:
                    label = h.label if isinstance(h, HOOK_TYPES) else repr(h)
                    lines.append(f"{event.value}[{m.matcher or '*'}]: {label}")
        return lines


def _dedupe(hooks: list[Hook]) -> list[Hook]:
    seen: set[object] = set()
    kept: list[Hook] = []
    for hook in hooks:
        key: object = id(hook) if isinstance(hook, CallableHook) else _identity(hook)
        if key not in seen:
            seen.add(key)
            kept.append(hook)
    return kept


def _identity(hook: Hook) -> object:
    """What makes two configured handlers the same handler (the source file does not)."""
    if isinstance(hook, CommandHook):
        env = tuple(sorted(hook.env.items()))  # two plugins' same command is two hooks
        return ("command", hook.command, hook.args, _text(hook.condition), hook.shell, env)
    if isinstance(hook, HttpHook):
        return ("http", hook.url, tuple(sorted(hook.headers.items())), _text(hook.condition))
    if isinstance(hook, PromptHook):
        return ("prompt", hook.prompt, hook.model, _text(hook.condition))
    return id(hook)


def _text(condition: HookCondition | None) -> str | None:
    return None if condition is None else str(condition)
