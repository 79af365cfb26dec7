"""The `permissions` key and `allowManagedPermissionRulesOnly`: one entry of the table of keys.

Rule lists concatenate over the files; `defaultMode` takes the last trusted file that sets it;
`additionalDirectories` concatenate. An untrusted project contributes its deny rules and the
tightening switches only (the rest goes to `Settings.ignored`). With
`allowManagedPermissionRulesOnly` in a managed file, allow rules come from managed files only
(their ask and deny rules stay: keeping them is stricter than Claude Code, never looser).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..permissions.modes import PermissionMode, parse_mode
from ..permissions.rules import PermissionRule, RuleBehavior, RuleSet
from .claude_settings import CLAUDE_MODES, CLAUDE_PERMISSION_KEYS
from .settings_file import FileContext, Severity

PERMISSION_KEYS = frozenset(
    {
        "allow",
        "ask",
        "deny",
        "defaultMode",
        "additionalDirectories",
        "disableBypassPermissionsMode",
        "denyInsteadOfPrompting",
        "blockWritesOutsideWorkingDirectories",
    }
)
TIGHTENING_FLAGS = {
    "denyInsteadOfPrompting": "deny_instead_of_prompting",
    "blockWritesOutsideWorkingDirectories": "block_writes_outside",
}
"""Boolean `permissions` keys that only tighten, and their `Settings` fields: `true` in any
file (an untrusted project's included) turns them on, and no file's `false` turns them off
(Claude Code: "true from any scope, honored even when a managed source sets false")."""
RULES_ONLY_MANAGED = "allowManagedPermissionRulesOnly"


class PermissionsRule:
    """Accumulates the `permissions` objects (and the managed-only rules switch)."""

    def __init__(self) -> None:
        self.rules = RuleSet()
        self.untrusted = RuleSet()
        """The allow rules of untrusted project files: ignored, kept only to say so."""
        self.default_mode: PermissionMode | None = None
        self.dont_ask = False
        """The last trusted `defaultMode` was Claude Code's `dontAsk`."""
        self.dirs: list[Path] = []
        self.disable_bypass = False
        self.tightened: dict[str, bool] = dict.fromkeys(TIGHTENING_FLAGS.values(), False)
        self.managed_rules_only = False
        self.managed_sources: set[str] = set()

    def result(self) -> dict[str, Any]:
        """The `Settings` fields this entry fills."""
        rules = self.rules
        if self.managed_rules_only:
            allow = tuple(r for r in rules.allow if r.source in self.managed_sources)
            rules = RuleSet(allow=allow, ask=rules.ask, deny=rules.deny)
        return {
            "rules": rules,
            "untrusted_rules": self.untrusted,
            "default_mode": self.default_mode,
            "additional_directories": tuple(self.dirs),
            "disable_bypass_mode": self.disable_bypass,
            **self.tightened,
            "deny_instead_of_prompting": self.dont_ask
            or self.tightened["deny_instead_of_prompting"],
        }

    def add(self, data: Mapping[str, Any], ctx: FileContext) -> None:
        """One file's `permissions` and `allowManagedPermissionRulesOnly`."""
        if ctx.managed:
            self.managed_sources.add(str(ctx.file.path))
        raw = data.get("permissions", {})
        if not isinstance(raw, Mapping):
            ctx.problem("permissions", "'permissions' must be an object")
        else:
            self._add(raw, ctx)
        if ctx.managed_switch(data, RULES_ONLY_MANAGED):
            self.managed_rules_only = True

    def _add(self, raw: Mapping[str, Any], ctx: FileContext) -> None:
        for key in raw:
            if key not in PERMISSION_KEYS and key not in CLAUDE_PERMISSION_KEYS:
                message = f"unknown key in 'permissions': {key!r} (ignored)"
                ctx.problem(key, message, Severity.WARNING)
        for behavior in ("deny", "ask", "allow"):
            rules = _rules(ctx, raw, behavior)
            if behavior == "deny" or ctx.trusted:
                self.rules = self.rules.merged(_ruleset(behavior, rules))
            elif rules:
                ctx.ignore(f"{behavior} rules " + ", ".join(map(str, rules)))
                self.untrusted = self.untrusted.merged(_ruleset(behavior, rules))
        self._add_mode(ctx, raw.get("defaultMode"))
        self._add_flags(ctx, raw)
        dirs = ctx.strings(raw, "additionalDirectories")
        if dirs and not ctx.trusted:
            ctx.ignore("additionalDirectories " + ", ".join(dirs))
        elif dirs:
            self.dirs.extend((ctx.root / Path(d).expanduser()) for d in dirs)

    def _add_flags(self, ctx: FileContext, raw: Mapping[str, Any]) -> None:
        """The tightening switches: read from every file, trusted or not (they can only
        take permission away), and never turned off again by a later file."""
        disable = raw.get("disableBypassPermissionsMode")
        if disable == "disable":
            self.disable_bypass = True
        elif disable is not None:
            ctx.problem(
                "disableBypassPermissionsMode",
                "'disableBypassPermissionsMode' must be \"disable\" (Claude Code's only value)",
            )
        for key, name in TIGHTENING_FLAGS.items():
            value = raw.get(key)
            if isinstance(value, bool):
                self.tightened[name] = self.tightened[name] or value
            elif value is not None:
                ctx.problem(key, f"'{key}' must be true or false")

    def _add_mode(self, ctx: FileContext, value: object) -> None:
        """`defaultMode`: queryloop's four modes and Claude Code's other values
        (`config.claude_settings.CLAUDE_MODES`); anything else is an error."""
        if value is None:
            return
        claude = CLAUDE_MODES.get(value) if isinstance(value, str) else None
        try:
            mode = (
                claude.mode
                if claude
                else parse_mode(value if isinstance(value, str) else repr(value))
            )
        except ConfigError as exc:
            ctx.problem("defaultMode", str(exc))
            return
        if not ctx.trusted:
            ctx.ignore(f"defaultMode {value}")
            return
        if claude is not None and claude.warning:
            ctx.problem("defaultMode", claude.warning, Severity.WARNING)
        self.default_mode = mode
        self.dont_ask = claude is not None and claude.dont_ask
        ctx.origin("defaultMode")


def _rules(
    ctx: FileContext, raw: Mapping[str, Any], behavior: RuleBehavior
) -> list[PermissionRule]:
    """A rule list. A deny or ask rule that does not parse is an error (fail closed); an
    allow rule that does not parse is dropped with a warning, since dropping an allow
    rule never loosens anything (Claude Code itself writes such rules, e.g.
    `Bash(node -e ':*)`, when a user answers "always" to a command with a quote)."""
    rules: list[PermissionRule] = []
    source = str(ctx.file.path)
    for text in ctx.strings(raw, behavior):
        try:
            rules.append(PermissionRule.parse(text, behavior, source=source, root=ctx.root))
        except ConfigError as exc:
            if behavior != "allow":
                ctx.problem(text, str(exc))
                continue
            dropped = f"{exc}; the allow rule was dropped (that never loosens anything)"
            ctx.problem(text, dropped, Severity.WARNING)
    return rules


def _ruleset(behavior: str, rules: list[PermissionRule]) -> RuleSet:
    found = tuple(rules)
    if behavior == "allow":
        return RuleSet(allow=found)
    return RuleSet(ask=found) if behavior == "ask" else RuleSet(deny=found)
