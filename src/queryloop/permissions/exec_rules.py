"""The Bash deny and ask rules as every program a command executes meets them
(`sandbox.ExecPolicy`, checked by the kernel through `sandbox.guard.ExecGuard`).

The parse of a command line (`permissions.shell.bash`) sees what the line names; the exec check
sees what actually runs: `cp /bin/rm zz && ./zz -rf x` executes rm's file under the name
`zz`, `make` runs its recipe's `rm -rf build` through `sh -c`, `python3 -c
"os.system('rm -rf x')"` through the interpreter. Each executed program is matched, under
every name it goes by, with its real arguments, against the same rules with the same matcher
(`bash.deny_verdict`).

- A deny rule refuses the exec.
- An ask rule refuses it too (nobody can answer in the middle of a command), except the ask
  rules the command line itself matched: the person approved those when asked about the call.
- `git push` denied: git pushes from inside its own process (an alias runs a builtin
  without an exec), so its transport stands for it: `git-receive-pack`, `ssh` carrying
  `git-receive-pack`, and the `git-remote-*` helpers unless git was plainly fetching.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from ..sandbox.exec_policy import ExecCall
from .rules import PermissionRule, RuleSet

GIT_FETCHING = frozenset({"fetch", "pull", "clone", "ls-remote", "remote", "submodule"})
"""git subcommands that start a remote helper without pushing."""
_GIT_GLOBAL_WITH_VALUE = frozenset({"-c", "-C", "--git-dir", "--work-tree", "--namespace"})


@dataclass(frozen=True, slots=True)
class ExecRules:
    """The rules one command's programs meet when they are executed."""

    rules: tuple[PermissionRule, ...]
    """Bash deny rules, then the ask rules the command line did not match."""
    heads: tuple[str | None, ...] = ()
    """Each rule's program (its first word; None when it has none), computed once."""
    push_rule: PermissionRule | None = None
    """The first rule that denies `git push`, whose transport then stands for it."""

    @classmethod
    def for_command(cls, rules: RuleSet, command: str) -> ExecRules | None:
        """The exec rules of `command` (None when no Bash rule restricts programs)."""
        deny = [r for r in rules.deny if _bash(r)]
        ask = [r for r in rules.ask if _bash(r) and not _matches(r, command)]
        found = tuple(deny + ask)
        if not found:
            return None
        push = next((r for r in found if _matches(r, "git push origin HEAD")), None)
        return cls(found, tuple(_program(r) for r in found), push)

    def programs(self) -> frozenset[str]:
        """The programs the rules name (and ssh, git's push transport, when `git push` is
        denied)."""
        names = {h for h in self.heads if h and "*" not in h}
        return frozenset(names | ({"ssh"} if self.push_rule is not None else set()))

    def refusal(self, call: ExecCall) -> str | None:
        """The first rule the executed program meets under any of its names. Only the
        rules that name the program are matched: a wrapper (`env`, `sh -c`, `xargs`) is
        not unwrapped here, since the program it runs is checked when it is executed."""
        for name in call.names:
            command: str | None = None
            for rule, head in zip(self.rules, self.heads, strict=True):
                if not _names(head, name):
                    continue
                command = command or shlex.join([name, *call.argv[1:]])
                if _matches(rule, command):
                    return _message(rule, name, call)
        if self.push_rule is not None and _pushes(call):
            return _message(self.push_rule, "git push", call, transport=True)
        return None


def exec_rules(rules: RuleSet, command: str) -> ExecRules | None:
    """`ExecRules.for_command` (what the session's `ExecGuard` calls per command)."""
    return ExecRules.for_command(rules, command)


def _bash(rule: PermissionRule) -> bool:
    return rule.tool == "Bash" and rule.content is not None


def _matches(rule: PermissionRule, command: str) -> bool:
    from .shell import bash

    return bash.deny_verdict(rule.content or "", command)[0] is bash.Verdict.MATCH


def _names(head: str | None, name: str) -> bool:
    """Whether a rule whose program is `head` may be about the program `name`."""
    return head is None or head == name or ("*" in head and fnmatchcase(name, head))


def _program(rule: PermissionRule) -> str | None:
    spec = (rule.content or "").strip().removesuffix(":*")
    try:
        words = shlex.split(spec)
    except ValueError:
        return None
    return words[0] if words else None


def _pushes(call: ExecCall) -> bool:
    """Whether this exec is git's push transport (see the module docstring). git's dashed
    programs are git's own file under other names: the name it is called by tells them
    apart (git itself picks its subcommand from that name)."""
    called = {os.path.basename(call.path), *(os.path.basename(a) for a in call.argv[:1])}
    if "git-receive-pack" in called:
        return True
    if "ssh" in call.names and any("git-receive-pack" in a for a in call.argv[1:]):
        return True
    if any(n.startswith("git-remote-") for n in called):
        return _git_subcommand(call.parent()) not in GIT_FETCHING
    return False


def _git_subcommand(argv: Iterable[str]) -> str | None:
    """The subcommand of a git command line (after its global options)."""
    words = list(argv)[1:]
    while words:
        word = words.pop(0)
        if word in _GIT_GLOBAL_WITH_VALUE:
            words = words[1:]
        elif not word.startswith("-"):
            return word
    return None


def _message(rule: PermissionRule, name: str, call: ExecCall, *, transport: bool = False) -> str:
    called = Path(call.argv[0]).name if call.argv else Path(call.path).name
    if transport:
        what = f"{called} is git's push transport; "
    elif name != called and "/" not in name:
        what = f"{called} is {name}; "
    else:
        what = ""
    if rule.behavior == "deny":
        return f"{what}the deny rule {rule} (from {rule.source}) refuses it"
    return (
        f"{what}the ask rule {rule} (from {rule.source}) asks for approval, which nobody can "
        "give in the middle of a command: run it as a Bash command of its own"
    )
