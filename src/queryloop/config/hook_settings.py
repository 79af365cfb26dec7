"""The `hooks` key with `disableAllHooks` and `allowManagedHooksOnly`: one entry of the table
of keys (`config.keys`).

Hooks concatenate over the trusted files (an untrusted project's are listed in
`Settings.ignored`). `disableAllHooks` takes the last trusted file that sets it (an untrusted
project cannot turn the user's hooks off); `allowManagedHooksOnly`, honoured in managed files
only, keeps the managed files' hooks alone. Either also keeps plugins' hooks off
(`Settings.hooks_off`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..hooks import HooksConfig, parse_hooks
from .hook_conditions import RuleCondition
from .settings_file import FileContext, Severity

DISABLE_ALL = "disableAllHooks"
MANAGED_ONLY = "allowManagedHooksOnly"


class HooksRule:
    """Accumulates each trusted file's hooks and the two switches."""

    def __init__(self) -> None:
        self.found: list[tuple[bool, HooksConfig]] = []
        """(from a managed file, its hooks), in precedence order."""
        self.disable_all = False
        self.managed_only = False

    def result(self) -> dict[str, Any]:
        """The hooks that run and why the others do not (`Settings.hooks`, `hooks_off`)."""
        hooks = HooksConfig()
        if not self.disable_all:
            for managed, config in self.found:
                if managed or not self.managed_only:
                    hooks = hooks.merged(config)
        return {"hooks": hooks, "hooks_off": self._off()}

    def _off(self) -> str | None:
        if self.disable_all:
            return DISABLE_ALL
        return MANAGED_ONLY if self.managed_only else None

    def add(self, data: Mapping[str, Any], ctx: FileContext) -> None:
        """One file's hooks and switches."""
        self._add_hooks(data.get("hooks"), ctx)
        disable = ctx.boolean(data, DISABLE_ALL)
        if disable is not None and ctx.trusted:
            self.disable_all = disable
            ctx.origin(DISABLE_ALL)
        elif disable:
            ctx.ignore(DISABLE_ALL)
        if ctx.managed_switch(data, MANAGED_ONLY):
            self.managed_only = True

    def _add_hooks(self, raw: object, ctx: FileContext) -> None:
        if raw is None:
            return
        source = str(ctx.file.path)
        root = ctx.root if ctx.project else None

        def condition(text: str) -> RuleCondition:
            return RuleCondition.parse(text, source=source, root=root)

        hooks, problems = parse_hooks(raw, source=source, parse_condition=condition)
        for problem in problems:  # Claude Code's keys never fail closed; its bad values do
            text = problem.message.removeprefix(f"{source}: ")
            ctx.problem("hooks", text, Severity.ERROR if problem.fatal else Severity.WARNING)
        if ctx.trusted:
            self.found.append((ctx.managed, hooks))
        elif hooks.count():
            ctx.ignore("hooks " + "; ".join(hooks.describe()))
