"""Bash permission rules on a real parse: the entry points the rule set and the checker use.

A line is parsed once (tree-sitter-bash, `shell_parse`), every command it may execute is found
(`shell_unwrap`: wrappers, nested shells, `find -exec`, git global options), and rules are
compared in a normal form (`shell_options`, `shell_match`). Everything is cached by the line's
text, so checking one call against many rules parses it once.

- `deny_verdict(content, line)`: MATCH, MAYBE or NO for a deny/ask specifier (liberal);
- `allow_approves(contents, line)`: whether allow specifiers approve every simple command of
  the line word for word, with nothing hidden (strict);
- `stages(line)`: the commands of a pipeline or `&&`/`||`/`;` list, each as a line of its
  own, when nothing in the line hides what runs (each stage is then judged alone);
- `path_words(line)`: the words that may name files, for `Read`/`Edit` deny rules;
- `summarize(line)`: what the line runs and writes, for the person asked to approve it.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from .match import Verdict, allow_candidates, allow_matches, may_concern, rule_verdict
from .unwrap import Invocation, ShellAnalysis, analyze
from .writes import WriteTarget, shell_writes

__all__ = [
    "CommandSummary",
    "ShellAnalysis",
    "Verdict",
    "allow_approves",
    "analyze",
    "deny_candidates",
    "deny_verdict",
    "directories",
    "path_words",
    "stages",
    "summarize",
]


def deny_verdict(content: str, line: str) -> tuple[Verdict, str]:
    """How a deny/ask specifier relates to `line`; the reason explains a MAYBE."""
    content = content.strip()
    if not may_concern(content, line):
        return Verdict.NO, ""
    return rule_verdict(content, line)


def allow_approves(contents: Sequence[str], line: str) -> str | None:
    """The first specifier approving the line's first command when allow rules approve every
    simple command of it and nothing is hidden; None otherwise."""
    analysis = analyze(line)
    if analysis.hazards or analysis.unknowns or not analysis.top:
        return None
    first: str | None = None
    for command in analysis.top:
        program = command.words[0].value or ""
        candidates = allow_candidates(contents, program)
        match = next((c for c in candidates if allow_matches(c, command)), None)
        if match is None:
            return None
        first = first or match
    return first


def stages(line: str) -> tuple[str, ...] | None:
    """The line's simple commands, each as a command line of its own, when the line is a
    pipeline or a list of two or more of them and hides nothing; None otherwise.

    None (the line is judged whole, and asks) for one command, or when anything would run or
    change what the stages cannot show alone: a `$(…)`, backticks or `<(…)`, a redirection
    from or to a file (`2>&1` and `/dev/null` are fine), a here-document, an assignment
    (`GIT_PAGER=… git log`), a word known only at run time or a glob (its text would not be
    the words the shell passes), or a line that does not parse.
    """
    analysis = analyze(line)
    if analysis.hazards or analysis.unknowns or len(analysis.top) < 2:
        return None
    out: list[str] = []
    for command in analysis.top:
        if command.assignments or not command.words:
            return None
        if not all(word.static for word in command.words):
            return None
        out.append(shlex.join(word.value or "" for word in command.words))
    return tuple(out)


def path_words(line: str) -> tuple[tuple[str, bool], ...]:
    """(word, is_glob) for every static word that may name a file: arguments of every
    invocation, redirection targets, and the value after `=` in `--file=x` / `if=x`."""
    seen: dict[tuple[str, bool], None] = {}
    for word in analyze(line).paths:
        value = word.value
        if not value:
            continue
        for part in (value, value.split("=", 1)[1] if "=" in value else ""):
            if part and not part.startswith("-"):
                seen[(part, word.glob)] = None
    return tuple(seen)


def directories(line: str) -> tuple[str | None, ...]:
    """The `cd`/`pushd` targets of the line in order; None for one only known at run time."""
    return tuple(w.value if w.static else None for w in analyze(line).directories)


def deny_candidates(line: str) -> tuple[str, ...]:
    """Every invocation of the line as text (dynamic words shown as `$…`), for diagnostics."""
    out: dict[str, None] = {line.strip(): None}
    for inv in analyze(line).invocations:
        out[" ".join(w.value if w.value is not None else "$…" for w in inv.words)] = None
    return tuple(out)


@dataclass(frozen=True, slots=True)
class CommandSummary:
    """What the analysis found in a Bash line, said to the person asked to approve it: a
    side effect at the end of a long line is shown on a line of its own."""

    commands: tuple[str, ...]
    """Every command the line may run, as shell text, nested code included (`bash -c 'rm
    x'` lists `rm x`); a wrapper's inner view that only repeats its words is left out.
    A word known only at run time is `$…`; `…` ends one that gets more arguments then."""
    writes: tuple[WriteTarget, ...]
    """Files it writes, changes or removes, and what does it (`shell_writes`)."""
    opaque: tuple[str, ...]
    """Programs whose writes no parse can tell (`python3 -c …`, `make`)."""
    writes_at_run_time: bool
    """Some file it writes is named only when it runs (`> $F`, `xargs rm`)."""
    unseen: tuple[str, ...]
    """What the analysis could not see through, with the reason."""


def summarize(line: str) -> CommandSummary:
    """The `CommandSummary` of `line` (from the cached analysis: no second parse)."""
    writes = shell_writes(line)
    analysis = analyze(line)
    commands: dict[str, None] = {}
    previous: Invocation | None = None
    for invocation in analysis.invocations:
        if previous is None or not _is_view_of(invocation, previous):
            commands[_text(invocation)] = None
        previous = invocation
    return CommandSummary(
        tuple(commands),
        writes.targets,
        writes.opaque,
        writes.dynamic or bool(writes.late),
        analysis.unknowns,
    )


def _text(invocation: Invocation) -> str:
    words = [shlex.quote(w.value) if w.value is not None else "$…" for w in invocation.words]
    return " ".join([*words, "…"] if invocation.open_tail else words)


def _is_view_of(inner: Invocation, outer: Invocation) -> bool:
    """`inner`'s words are `outer`'s with some left out (`sudo rm x` -> `rm x`, `git -C .
    push` -> `git push`, `A=1 make` -> `make`)."""
    words = iter(outer.words)
    return len(inner.words) < len(outer.words) and all(w in words for w in inner.words)
