"""Fail closed: a Bash call the deny rules might cover, but the analysis cannot prove it, asks.

Runs after the definite deny rules and before modes and allow rules, so neither an allow rule
nor `bypassPermissions` can approve such a call; only a person (or `can_use_tool`) can. It asks
when

- a Bash deny or ask rule *may* apply (`RuleSet.doubt`: a program that is not statically known,
  shell code from a variable or a pipe, an unknown wrapper, words only known at run time);
- the line cannot be fully analysed and any `Read`/`Edit` deny rule exists;
- a word of the command, or a redirection target (globs expanded in the working folder), names
  a path a `Read` or `Edit` deny rule protects: `cat .env`, `grep . .env`, `cp .env /tmp`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..tools.base import ToolContext
from . import paths
from .rules import MatchContext, PermissionRule, RuleSet


@dataclass(frozen=True, slots=True)
class Doubt:
    """Why a call must be asked about, and the rule concerned."""

    reason: str
    rule: str | None


def bash_doubt(rules: RuleSet, command: str, ctx: ToolContext, mc: MatchContext) -> Doubt | None:
    """The reason this Bash command must ask, or None."""
    found = rules.doubt(command)
    if found is not None:
        rule, why = found
        # An empty reason is a definite match (an ask rule that surely applies), not a doubt.
        applies = f"may apply: {why}" if why else "applies"
        return Doubt(f"the rule {rule} (from {rule.source}) {applies}", str(rule))
    file_rules = [r for r in rules.deny if r.tool in ("Read", "Edit") and r.content]
    if not file_rules:
        return None
    from .shell import bash

    analysis = bash.analyze(command)
    if analysis.unknowns:
        rule = file_rules[0]
        reason = f"{analysis.unknowns[0]}, so the rule {rule} (from {rule.source}) may apply"
        return Doubt(reason, str(rule))
    return _protected_path(rules, command, ctx, mc)


def _protected_path(
    rules: RuleSet, command: str, ctx: ToolContext, mc: MatchContext
) -> Doubt | None:
    protected: list[_Protected] = []
    for rule in rules.deny:
        if rule.tool in ("Read", "Edit") and rule.content:
            root = rule.root or mc.cwd
            pattern = paths.compile_pattern(rule.content, root=root, cwd=mc.cwd, home=mc.home)
            protected.append(_Protected(rule, pattern, os.path.realpath(pattern.base)))
    from .shell import bash
    from .shell.writes import bases, expand

    folders = bases(bash.directories(command), str(ctx.cwd))
    for word, is_glob in bash.path_words(command):
        for path in expand(word, is_glob, folders):
            found = _protecting(protected, path)
            if found is not None:
                return Doubt(
                    f"the command names {path}, which the rule {found} (from {found.source}) "
                    "protects",
                    str(found),
                )
    return None


@dataclass(frozen=True, slots=True)
class _Protected:
    rule: PermissionRule
    pattern: paths.PathPattern
    real_base: str


def _protecting(protected: list[_Protected], path: str) -> PermissionRule | None:
    """The rule protecting `path` as written or, when it exists, with symlinks resolved (a
    path that does not exist cannot be read, so its symlinks need not be looked up)."""
    literal = os.path.normpath(path)
    for item in protected:
        if paths.matches_literal(item.pattern, literal):
            return item.rule
    if not os.path.lexists(literal):
        return None
    real = os.path.realpath(literal)
    for item in protected:
        if paths.covers(item.pattern, item.real_base, real):
            return item.rule
    return None


def headless_message(description: str, reason: str) -> str:
    """The denial the model reads when nobody can answer a fail-closed ask."""
    return (
        f"{description} was not run: {reason}. Deny rules protect this and no one can approve "
        "it in this non-interactive session. Write the command with literal program names "
        "(no $VAR, $(…) or backticks as a command, no code piped into a shell) and leave out "
        "what the deny rules protect."
    )
