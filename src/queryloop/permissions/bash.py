"""Shell-command analysis for Bash permission rules.

A prefix rule such as `Bash(git diff:*)` must never approve `git diff; rm -rf x`. This module
splits a command line into its simple commands (quote-aware) and flags the constructs that can
run something a prefix does not show: command substitution (`$(…)`, backticks), process
substitution (`<(…)`, `>(…)`) and redirections to files. The checker uses it so that an allow
rule approves a command only when every simple command matches and nothing is hidden, while a
deny rule matches when ANY part matches.

This is deliberately conservative: something it cannot prove harmless is "not allowed by the
rule", which means the user is asked, never that it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_SEPARATORS = ("&&", "||", "|&", ";;", ";", "|", "&", "\n")
_SAFE_REDIRECT = re.compile(r"^(?:\d?>&\d|\d?>\s*/dev/null|&>\s*/dev/null|\d?<&\d)(?![\w./-])")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*\s+")
_WRAPPERS = ("sudo ", "env ", "nohup ", "time ", "exec ", "command ", "builtin ", "nice ")


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    """A command line split into simple commands, plus what makes prefix matching unsafe."""

    commands: tuple[str, ...]
    """The simple commands, separated at `;`, `&&`, `||`, `|`, `&` and newlines."""
    substitutions: tuple[str, ...]
    """The text inside `$(…)`, backticks and process substitutions (for deny matching)."""
    hazards: tuple[str, ...]
    """Human-readable reasons an allow rule must not approve this line (empty when safe)."""


class _Scanner:
    """One pass over a command line, tracking quotes; small enough to audit by eye."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.commands: list[str] = []
        self.substitutions: list[str] = []
        self.hazards: list[str] = []
        self._current: list[str] = []
        self._quote = ""

    def run(self) -> ShellAnalysis:
        i, n = 0, len(self.line)
        while i < n:
            i = self._step(i)
        if self._quote:
            self.hazards.append("unterminated quote")
        self._flush()
        return ShellAnalysis(tuple(self.commands), tuple(self.substitutions), tuple(self.hazards))

    def _step(self, i: int) -> int:
        """Consume one position (or a construct starting there); returns the next index."""
        ch = self.line[i]
        if self._quote == "'":  # single quotes: everything literal until the next '
            self._quote = "" if ch == "'" else self._quote
            self._current.append(ch)
            return i + 1
        if ch == "\\" and i + 1 < len(self.line):  # escapes: unquoted, in "…" and in $'…'
            self._current.append(self.line[i : i + 2])
            return i + 2
        if self._quote == "$'":  # ANSI-C quoting: like '…' but \' does not end it
            self._quote = "" if ch == "'" else self._quote
            self._current.append(ch)
            return i + 1
        if self._quote == '"':
            if ch == "`" or self.line.startswith("$(", i):
                return self._substitution(i)
            self._quote = "" if ch == '"' else self._quote
            self._current.append(ch)
            return i + 1
        return self._open_or_unquoted(i)

    def _open_or_unquoted(self, i: int) -> int:
        ch = self.line[i]
        if self.line.startswith("$'", i):
            self.hazards.append("ANSI-C quoting")
            self._quote = "$'"
            self._current.append("$'")
            return i + 2
        if ch in "'\"":
            self._quote = ch
            self._current.append(ch)
            return i + 1
        if ch == "#" and (i == 0 or self.line[i - 1] in " \t\n;&|()"):
            # A comment hides the rest of its line from the shell, including quote characters
            # that would otherwise make us see one command where the shell sees several.
            self.hazards.append("comment")
            end = self.line.find("\n", i)
            return len(self.line) if end < 0 else end
        return self._unquoted(i)

    def _unquoted(self, i: int) -> int:
        """Handle one unquoted position; returns the next index (negative: quote opened)."""
        ch = self.line[i]
        if ch == "`" or self.line.startswith("$(", i):
            return self._substitution(i)
        if self.line.startswith(("<(", ">("), i):
            self.hazards.append("process substitution")
            return self._substitution(i)
        if ch in "<>":
            return self._redirect(i)
        if self.line.startswith("&>", i):
            self._current.append("&")
            return self._redirect(i + 1)
        for sep in _SEPARATORS:
            if self.line.startswith(sep, i):
                if sep == "\n":
                    self.hazards.append("newline")
                self._flush()
                return i + len(sep)
        self._current.append(ch)
        return i + 1

    def _substitution(self, i: int) -> int:
        """Record `$(…)`, `<(…)`, `>(…)` or a backtick span; returns the index after it."""
        if self.line[i] == "`":
            end = self.line.find("`", i + 1)
            end = len(self.line) if end < 0 else end
            self.substitutions.append(self.line[i + 1 : end])
            self.hazards.append("command substitution")
            self._current.append(self.line[i : end + 1])
            return end + 1
        depth, j = 0, i + 1
        while j < len(self.line):
            if self.line[j] == "(":
                depth += 1
            elif self.line[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        self.substitutions.append(self.line[i + 2 : j])
        if "command substitution" not in self.hazards and self.line[i] == "$":
            self.hazards.append("command substitution")
        self._current.append(self.line[i : j + 1])
        return j + 1

    def _redirect(self, i: int) -> int:
        start = i - 1 if i > 0 and self.line[i - 1] in "0123456789&" else i
        safe = _SAFE_REDIRECT.match(self.line[start:])
        if safe is None:
            self.hazards.append("redirection")
            self._current.append(self.line[i])
            return i + 1
        end = start + safe.end()
        self._current.append(self.line[i:end])
        return end

    def _flush(self) -> None:
        text = "".join(self._current).strip()
        if text:
            self.commands.append(text)
        self._current = []


@lru_cache(maxsize=256)
def analyze(command: str) -> ShellAnalysis:
    """Split `command` into simple commands and list what makes prefix matching unsafe.

    Cached: one call is checked against every rule, and the result is immutable.
    """
    scanner = _Scanner(command)
    return scanner.run()


@lru_cache(maxsize=256)
def deny_candidates(command: str) -> tuple[str, ...]:
    """Every form of every simple command a deny/ask rule should be tested against.

    Includes the whole line, each simple command, the commands inside substitutions, and each
    of those with leading `VAR=value` assignments, wrappers (`sudo`, `env`, `nohup`, …) and
    subshell parentheses stripped, so `sudo rm -rf x` still matches `Bash(rm:*)`.
    """
    seen: list[str] = [command.strip()]
    pending = [command]
    depth = 0
    while pending and depth < 5:
        analysis = analyze(pending.pop())
        for part in analysis.commands:
            for form in _stripped_forms(part):
                if form not in seen:
                    seen.append(form)
        pending.extend(analysis.substitutions)
        depth += 1
    return tuple(seen)


def _stripped_forms(part: str) -> list[str]:
    forms = [part]
    current = part.strip()
    while current[:1] in ("(", "{") and current[-1:] in (")", "}"):
        current = current[1:-1].strip()
    for _ in range(8):
        previous = current
        current = _ENV_ASSIGN.sub("", current)
        for wrapper in _WRAPPERS:
            if current.startswith(wrapper):
                current = current[len(wrapper) :].lstrip()
        if current == previous:
            break
    if current and current not in forms:
        forms.append(current)
    return forms
