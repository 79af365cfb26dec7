"""Limits the settings put on `http` hooks: `allowedHttpHookUrls`, `httpHookAllowedEnvVars`.

Claude Code's rules (settings reference, `allowedHttpHookUrls` and `httpHookAllowedEnvVars`;
code.claude.com/docs/en/settings-reference): when `allowedHttpHookUrls` is set, an http hook
runs only if its URL matches one of the patterns (`config.url_patterns`), and the others are
not called; `[]` refuses every http hook. `httpHookAllowedEnvVars` is an outer limit on each
hook's own `allowedEnvVars`: a header may read a variable only when both name it. Both lists
merge over the settings files and apply to hooks from every source (settings of every scope,
plugins, hooks given in code).

A refused hook is not dropped: it stays configured with `HttpHook.refused` set, so when its
event fires the run reports a non-blocking error naming the setting (`hooks.http`), and the
user learns why their hook did nothing; the session's notices name it at the start too.

Both keys are allowlists, so an untrusted project's are ignored: merged in, they would widen
the user's. A URL pattern without `scheme://host` is dropped with a warning (that narrows).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..hooks import HooksConfig, HttpHook
from ..hooks.config import Hook
from .sandbox import Problem
from .settings_file import FileContext
from .url_patterns import is_url_pattern, url_matches


@dataclass(frozen=True, slots=True)
class HttpHookPolicy:
    """The merged limits; None where no settings file sets the key."""

    allowed_urls: tuple[str, ...] | None = None
    allowed_env_vars: frozenset[str] | None = None

    def applied(self, hooks: HooksConfig) -> HooksConfig:
        """`hooks` with every http hook narrowed to the limits."""
        if self.allowed_urls is None and self.allowed_env_vars is None:
            return hooks
        return hooks.mapped(self._narrowed)

    def _narrowed(self, hook: Hook) -> Hook:
        if not isinstance(hook, HttpHook):
            return hook
        if self.allowed_env_vars is not None:
            kept = tuple(v for v in hook.allowed_env_vars if v in self.allowed_env_vars)
            hook = replace(hook, allowed_env_vars=kept)
        urls = self.allowed_urls
        if urls is not None and not any(url_matches(p, hook.url) for p in urls):
            hook = replace(
                hook,
                refused=f"not called: {hook.url} is not in the settings' allowedHttpHookUrls",
            )
        return hook

    def refused(self, hooks: HooksConfig) -> list[str]:
        """One line per http hook the policy refuses (`PostToolUse[Bash]: POST url`)."""
        return [
            f"{event.value}[{matcher.matcher or '*'}]: {hook.label}"
            for event, matchers in self.applied(hooks).events.items()
            for matcher in matchers
            for hook in matcher.hooks
            if isinstance(hook, HttpHook) and hook.refused is not None
        ]


class HttpHookPolicyMerger:
    """`allowedHttpHookUrls` and `httpHookAllowedEnvVars` across settings files: lists merge;
    no file setting a key leaves it unlimited."""

    def __init__(self) -> None:
        self.urls: list[str] | None = None
        self.env_vars: set[str] | None = None

    def add(self, data: Mapping[str, object], ctx: FileContext) -> None:
        """One file's keys."""
        urls = _strings(data, "allowedHttpHookUrls", ctx.flag)
        names = _strings(data, "httpHookAllowedEnvVars", ctx.flag)
        if not ctx.trusted:
            for key, value in (("allowedHttpHookUrls", urls), ("httpHookAllowedEnvVars", names)):
                if value is not None:
                    ctx.ignore(f"{key} (an untrusted project cannot widen it)")
            return
        if urls is not None:
            for bad in (u for u in urls if not is_url_pattern(u)):
                message = f"allowedHttpHookUrls: {bad!r} is not a URL pattern such as "
                ctx.flag(bad, message + "'https://hooks.example.com/*'; it was dropped", False)
            self.urls = [*(self.urls or ()), *(u for u in urls if is_url_pattern(u))]
        if names is not None:
            self.env_vars = (self.env_vars or set()) | set(names)

    def result(self) -> HttpHookPolicy:
        """The merged limits."""
        urls = tuple(self.urls) if self.urls is not None else None
        names = frozenset(self.env_vars) if self.env_vars is not None else None
        return HttpHookPolicy(urls, names)


def _strings(data: Mapping[str, object], key: str, problem: Problem) -> list[str] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problem(key, f"'{key}' must be a list of strings", True)
        return None
    return list(value)
