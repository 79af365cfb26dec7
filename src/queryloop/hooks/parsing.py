"""Reading a settings file's `hooks` value into a `HooksConfig`.

What Claude Code accepts never stops a run: an event queryloop never fires, a handler type it
cannot run (`agent`, `mcp_tool`) or a field it does not act on is a *warning* naming it, and
the rest of the file's hooks load. What Claude Code would reject (a handler without its
command, a bad timeout, an unknown type, a matcher that is not a regex) is an *error*: the
settings fail closed. No field that changes what a hook does is dropped without a word.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .config import CommandHook, Hook, HookCondition, HookMatcher, HooksConfig, HttpHook, PromptHook
from .config import compile_matcher as _compile
from .events import COMMAND_ONLY, MODEL_HOOK_EVENTS, NOT_FIRED, TOOL_EVENTS, HookEvent

ParseCondition = Callable[[str], HookCondition]
"""Turns an `if` rule (`Bash(git *)`) into a condition; raises ValueError for a bad rule."""

COMMON_KEYS = frozenset({"type", "if", "timeout", "statusMessage", "once"})
TYPE_KEYS: Mapping[str, frozenset[str]] = {
    "command": frozenset({"command", "args", "async", "asyncRewake", "shell"}),
    "http": frozenset({"url", "headers", "allowedEnvVars"}),
    "prompt": frozenset({"prompt", "model", "continueOnBlock"}),
    "agent": frozenset({"prompt", "model"}),
    "mcp_tool": frozenset({"server", "tool", "input"}),
}
UNSUPPORTED_TYPES = frozenset({"agent", "mcp_tool"})


@dataclass(frozen=True, slots=True)
class HookProblem:
    """Something in a `hooks` value; `fatal` ones stop the run (settings fail closed)."""

    message: str
    fatal: bool = True

    def __str__(self) -> str:
        return self.message


def parse_hooks(
    raw: object, *, source: str, parse_condition: ParseCondition | None = None
) -> tuple[HooksConfig, list[HookProblem]]:
    """Parse a settings file's `hooks` value; returns the config and the problems found.

    `parse_condition` reads handlers' `if` rules (the configuration layer passes the
    permission-rule parser); without it an `if` is a warning and the hook runs unfiltered.
    """
    if not isinstance(raw, Mapping):
        return HooksConfig(), [
            HookProblem(f"{source}: 'hooks' must be an object mapping event names to lists")
        ]
    parser = _Parser(source, parse_condition)
    events: dict[HookEvent, tuple[HookMatcher, ...]] = {}
    for name, entries in raw.items():
        event = parser.event(name)
        if event is None:
            continue
        if not isinstance(entries, list):
            parser.error(f"hooks.{name} must be a list of {{matcher, hooks}} objects")
            continue
        matchers = [m for e in entries if (m := parser.matcher(e, event))]
        if matchers:
            events[event] = tuple(matchers)
    return HooksConfig(events), parser.problems


class _Parser:
    def __init__(self, source: str, parse_condition: ParseCondition | None) -> None:
        self.source = source
        self.parse_condition = parse_condition
        self.problems: list[HookProblem] = []
        self._warned: set[str] = set()

    def error(self, text: str) -> None:
        self.problems.append(HookProblem(f"{self.source}: {text}"))

    def warn(self, text: str) -> None:
        if text not in self._warned:  # once by name, however many handlers say it
            self._warned.add(text)
            self.problems.append(HookProblem(f"{self.source}: {text}", fatal=False))

    def event(self, name: object) -> HookEvent | None:
        try:
            event = HookEvent(str(name))
        except ValueError:
            self.warn(
                f"unknown hook event {name!r} (ignored; Claude Code's events: see docs/hooks.md)"
            )
            return None
        if event in NOT_FIRED:
            self.warn(f"hook event {event.value!r} is not fired by queryloop (its hooks never run)")
        return event

    def matcher(self, entry: object, event: HookEvent) -> HookMatcher | None:
        where = f"hooks.{event.value}"
        if not isinstance(entry, Mapping):
            self.error(f"{where}: each entry must be an object with 'matcher' and 'hooks'")
            return None
        matcher = entry.get("matcher", "")
        if matcher is None:
            matcher = ""
        if not isinstance(matcher, str):
            self.error(f"{where}: 'matcher' must be a string, got {matcher!r}")
            return None
        try:
            _compile(matcher)
        except re.error as exc:
            self.error(f"{where}: matcher {matcher!r} is not a valid regex ({exc})")
            return None
        items = entry.get("hooks")
        if not isinstance(items, list):
            self.error(f'{where}: \'hooks\' must be a list of {{"type": "command", ...}}')
            return None
        hooks = [h for item in items if (h := self.handler(item, event, where))]
        return HookMatcher(matcher, hooks) if hooks else None

    def handler(self, item: object, event: HookEvent, where: str) -> Hook | None:
        if not isinstance(item, Mapping):
            self.error(f'{where}: each hook must be an object such as {{"type": "command", ...}}')
            return None
        kind = item.get("type", "command")
        if kind not in TYPE_KEYS:
            known = ", ".join(TYPE_KEYS)
            self.error(f"{where}: unknown hook type {kind!r} (known: {known})")
            return None
        for key in item:
            if key not in COMMON_KEYS and key not in TYPE_KEYS[kind]:
                self.warn(f"{where}: unknown field {key!r} of a {kind} hook (ignored)")
        if kind in UNSUPPORTED_TYPES:
            self.warn(f"{where}: {kind!r} hooks are not supported by queryloop (skipped)")
            return None
        if not self._allowed(kind, event, where):
            return None
        common = self.common(item, event, where)
        if common is None:
            return None
        if kind == "command":
            return self.command(item, where, common)
        if kind == "http":
            return self.http(item, where, common)
        return self.prompt(item, where, common)

    def _allowed(self, kind: str, event: HookEvent, where: str) -> bool:
        if event in COMMAND_ONLY and kind != "command":
            self.warn(f"{where}: {event.value} runs command hooks only; the {kind} hook is skipped")
            return False
        if kind == "prompt" and event not in MODEL_HOOK_EVENTS:
            self.warn(f"{where}: {event.value} does not run prompt hooks; skipped")
            return False
        return True

    def common(
        self, item: Mapping[str, Any], event: HookEvent, where: str
    ) -> dict[str, Any] | None:
        timeout = item.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            self.error(f"{where}: hook 'timeout' must be a positive number of seconds")
            return None
        status = item.get("statusMessage")
        if status is not None and not isinstance(status, str):
            self.error(f"{where}: 'statusMessage' must be a string")
            return None
        once = item.get("once", False)
        if not isinstance(once, bool):
            self.error(f"{where}: 'once' must be true or false")
            return None
        return {
            "timeout": None if timeout is None else float(timeout),
            "source": self.source,
            "condition": self.condition(item.get("if"), event, where),
            "status_message": status or None,
            "once": once,
        }

    def condition(self, text: object, event: HookEvent, where: str) -> HookCondition | None:
        if text is None:
            return None
        if not isinstance(text, str) or not text.strip():
            self.warn(f"{where}: 'if' must be one permission rule such as \"Bash(git *)\"; ignored")
            return None
        if event not in TOOL_EVENTS:  # Claude Code: on other events a hook with `if` never runs
            self.warn(f"{where}: 'if' is evaluated on tool events only; this hook never runs")
            return _NEVER
        if self.parse_condition is None:
            self.warn(f"{where}: 'if' {text!r} cannot be evaluated here; the hook always runs")
            return None
        try:
            return self.parse_condition(text)
        except ValueError as exc:
            self.warn(
                f"{where}: 'if' {text!r} is not a permission rule ({exc}); the hook always runs"
            )
            return None

    def command(self, item: Mapping[str, Any], where: str, common: dict[str, Any]) -> Hook | None:
        command, args = item.get("command"), item.get("args")
        if not isinstance(command, str) or not command.strip():
            self.error(f"{where}: hook 'command' must be a non-empty string")
            return None
        if args is not None and (
            not isinstance(args, list) or not all(isinstance(a, str) for a in args)
        ):
            self.error(f"{where}: hook 'args' must be a list of strings")
            return None
        shell = item.get("shell")
        if shell not in (None, "bash", "powershell"):
            self.error(f'{where}: hook \'shell\' must be "bash" or "powershell"')
            return None
        if shell == "powershell" and args is None:
            self.warn(f'{where}: shell "powershell" is not supported by queryloop (skipped)')
            return None
        run_async = item.get("async", False) is True or item.get("asyncRewake", False) is True
        if item.get("asyncRewake", False) is True:
            self.warn(f"{where}: 'asyncRewake' runs the hook in the background, but its exit 2 "
                      "does not wake the model in queryloop")  # fmt: skip
        return CommandHook(
            command,
            args=None if args is None else tuple(args),
            run_async=run_async,
            shell=shell,
            **common,
        )

    def http(self, item: Mapping[str, Any], where: str, common: dict[str, Any]) -> Hook | None:
        url, headers, allowed = (
            item.get("url"),
            item.get("headers", {}),
            item.get("allowedEnvVars", []),
        )
        if not isinstance(url, str) or not re.match(r"^https?://", url):
            self.error(f"{where}: http hook 'url' must be an http:// or https:// URL")
            return None
        if not isinstance(headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            self.error(f"{where}: http hook 'headers' must be an object of string values")
            return None
        if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
            self.error(f"{where}: http hook 'allowedEnvVars' must be a list of names")
            return None
        return HttpHook(url, dict(headers), tuple(allowed), **common)

    def prompt(self, item: Mapping[str, Any], where: str, common: dict[str, Any]) -> Hook | None:
        prompt, model = item.get("prompt"), item.get("model")
        if not isinstance(prompt, str) or not prompt.strip():
            self.error(f"{where}: prompt hook 'prompt' must be a non-empty string")
            return None
        if model is not None and not isinstance(model, str):
            self.error(f"{where}: prompt hook 'model' must be a string")
            return None
        return PromptHook(
            prompt, model or None, continue_on_block=item.get("continueOnBlock") is True, **common
        )


class _Never:
    """The `if` of a hook on an event without a tool: Claude Code never runs such a hook."""

    def matches(self, tool_name: str, tool_input: Mapping[str, Any], cwd: object) -> bool:
        return False

    def __str__(self) -> str:
        return "never"


_NEVER = _Never()
