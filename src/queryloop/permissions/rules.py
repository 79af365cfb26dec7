"""Permission rules: `Tool`, `Tool(specifier)`, `mcp__server`, `mcp__server__tool`.

Specifiers by tool:

- `Bash(git diff:*)`: the command is `git diff` or starts with `git diff ` (word boundary);
  `Bash(npm test)`: exactly that command; `Bash(npm run *)`: `*` matches anything.
- `Read(...)`, `Edit(...)`: gitignore-style path patterns (see `permissions.paths`); Edit rules
  cover Write/MultiEdit/NotebookEdit, Read rules cover Glob/Grep/LS.
- `WebFetch(domain:example.com)`: the URL's host (`*.example.com` allowed).
- anything else: the tool's permission subject compared with `fnmatch`.

Bash rules are matched on a real parse of the command (see `permissions.shell.bash` and
docs/settings.md): an allow rule approves a line only when EVERY simple command in it is
approved word for word and the line hides nothing (no `$(…)`, backticks, process
substitution, file redirections, assignments); deny and ask rules match when ANY command the
line may execute matches, wrappers and nested shells looked through, flags normalised. A deny
or ask rule that *may* match (the parse cannot see part of the line) is reported by
`RuleSet.doubt`, and the checker asks instead of allowing.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from ..errors import ConfigError
from . import paths
from .modes import EDIT_TOOLS, FILE_TOOLS, READ_TOOLS

RuleBehavior = Literal["allow", "ask", "deny"]

_RULE = re.compile(r"^\s*([A-Za-z0-9_*.\-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class PermissionRule:
    """One allow/ask/deny rule and where it came from."""

    tool: str
    content: str | None
    behavior: RuleBehavior
    source: str = "session"
    """Where the rule was written: a settings file path, `cli`, `sdk` or `session`."""
    root: Path | None = None
    """The folder `/path` patterns are relative to (the settings file's project or home)."""

    @classmethod
    def parse(
        cls, text: str, behavior: RuleBehavior, *, source: str = "session", root: Path | None = None
    ) -> PermissionRule:
        """Parse `Tool` or `Tool(specifier)`; raises ConfigError naming the bad rule."""
        match = _RULE.match(text) if isinstance(text, str) else None
        if match is None:
            raise ConfigError(
                f"invalid permission rule {text!r} in {source}: write Tool or Tool(specifier), "
                "for example Bash(git diff:*) or Edit(src/**)"
            )
        content = match.group(2)
        if content is not None and content.strip() in ("", "*"):
            content = None
        if match.group(1) == "Bash" and content is not None:
            _check_bash_specifier(text, content, source)
        return cls(match.group(1), content, behavior, source, root)

    def __str__(self) -> str:
        return self.tool if self.content is None else f"{self.tool}({self.content})"

    def applies_to(self, tool_name: str) -> bool:
        """True when the rule names this tool (or its family, MCP server or a glob of names)."""
        if self.tool == tool_name:
            return True
        if self.tool == "Edit" and tool_name in EDIT_TOOLS:
            return True
        if self.tool == "Read" and tool_name in READ_TOOLS:
            return True
        if self.tool.startswith("mcp__") and self.tool.count("__") == 1:
            return tool_name.startswith(self.tool + "__")
        return "*" in self.tool and fnmatchcase(tool_name, self.tool)


def _check_bash_specifier(text: str, content: str, source: str) -> None:
    spec = content.strip()
    spec = spec[:-2] if spec.endswith(":*") else spec
    try:
        shlex.split(spec)
    except ValueError as exc:
        raise ConfigError(
            f"invalid permission rule {text!r} in {source}: the command does not parse ({exc}); "
            "balance its quotes, for example Bash(git commit -m 'wip':*)"
        ) from exc


@dataclass(frozen=True, slots=True)
class MatchContext:
    """What relative patterns are resolved against."""

    cwd: Path
    home: Path


@dataclass(frozen=True)
class RuleSet:
    """allow / ask / deny rules, evaluated deny before ask before allow."""

    allow: tuple[PermissionRule, ...] = ()
    ask: tuple[PermissionRule, ...] = ()
    deny: tuple[PermissionRule, ...] = ()

    @classmethod
    def from_strings(
        cls,
        *,
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        source: str = "sdk",
        root: Path | None = None,
    ) -> RuleSet:
        """Rules given as strings (SDK options, command-line flags)."""

        def parse(texts: Iterable[str], behavior: RuleBehavior) -> tuple[PermissionRule, ...]:
            return tuple(PermissionRule.parse(t, behavior, source=source, root=root) for t in texts)

        return cls(parse(allow, "allow"), parse(ask, "ask"), parse(deny, "deny"))

    def merged(self, other: RuleSet) -> RuleSet:
        """Both sets' rules (order kept: self first)."""
        return RuleSet(self.allow + other.allow, self.ask + other.ask, self.deny + other.deny)

    def find(
        self, behavior: RuleBehavior, tool_name: str, subject: str | None, mc: MatchContext
    ) -> PermissionRule | None:
        """The first rule of `behavior` that decides this call, or None."""
        pool = {"allow": self.allow, "ask": self.ask, "deny": self.deny}[behavior]
        rules = [r for r in pool if r.applies_to(tool_name)]
        if not rules:
            return None
        if behavior == "allow":
            return _find_allow(rules, tool_name, subject, mc)
        for rule in rules:
            if _matches(rule, tool_name, subject, mc, strict=False):
                return rule
        return None

    def doubt(self, command: str) -> tuple[PermissionRule, str] | None:
        """A Bash deny or ask rule that may apply to `command` although the parse cannot
        tell (MAYBE), and why; None when every such rule surely does not apply."""
        for rule in (*self.deny, *self.ask):
            if rule.content is None or not rule.applies_to("Bash"):
                continue
            from .shell import bash

            verdict, reason = bash.deny_verdict(rule.content, command)
            if verdict is not bash.Verdict.NO:
                return rule, reason
        return None


def _find_allow(
    rules: list[PermissionRule], tool_name: str, subject: str | None, mc: MatchContext
) -> PermissionRule | None:
    for rule in rules:
        if rule.content is None:
            return rule
    if tool_name != "Bash" or subject is None:
        for rule in rules:
            if _matches(rule, tool_name, subject, mc, strict=True):
                return rule
        return None
    command = subject.strip()
    for rule in rules:  # an explicit, exact rule for this whole line is the user's decision
        if "*" not in (rule.content or "") and (rule.content or "").strip() == command:
            return rule
    contents = [rule.content or "" for rule in rules]
    from .shell import bash

    first = bash.allow_approves(contents, command)
    return None if first is None else rules[contents.index(first)]


def _matches(
    rule: PermissionRule, tool_name: str, subject: str | None, mc: MatchContext, *, strict: bool
) -> bool:
    """Does the rule's specifier match? `strict` (allow) resolves symlinks only."""
    if rule.content is None:
        return True
    if subject is None:
        return False
    if tool_name == "Bash" and not strict:
        from .shell import bash

        return bash.deny_verdict(rule.content, subject)[0] is bash.Verdict.MATCH
    if tool_name in FILE_TOOLS and rule.tool in ("Read", "Edit", tool_name):
        root = rule.root or mc.cwd
        pattern = paths.compile_pattern(rule.content, root=root, cwd=mc.cwd, home=mc.home)
        target = Path(subject).expanduser()
        target = target if target.is_absolute() else mc.cwd / target
        return paths.matches(pattern, target, resolved_only=strict)
    if rule.content.startswith("domain:"):
        host = urlsplit(subject).hostname or ""
        return fnmatchcase(host.lower(), rule.content[len("domain:") :].strip().lower())
    return subject == rule.content or fnmatchcase(subject, rule.content)
