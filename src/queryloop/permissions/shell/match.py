"""Bash rule specifiers matched against what a line may execute (`shell_unwrap.analyze`).

Deny and ask rules are matched *liberally* and answer with a `Verdict`: MATCH (the rule
applies), MAYBE (it may apply: part of the line could not be seen, or a match was found only by
trying positions after an unknown option) or NO. The checker denies on MATCH and asks on MAYBE,
in every mode. Allow rules are matched *strictly* on the line's own simple commands: literal
words, no wrappers looked through, nothing hidden (`allow_matches`).

Specifier forms: `cmd args:*` and `cmd args *` (prefix), `cmd args` (exact), anything else
with `*` (a wildcard over the command's words joined by spaces, and over the whole line).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Literal, NamedTuple

from .options import SUBCOMMAND_PROGRAMS, canonical, split_option, table_key
from .parse import SimpleCommand, Word
from .runs import Run, code_tokens
from .unwrap import SHELLS, Invocation, ShellAnalysis, analyze
from .wrappers import WRAPPERS

NOT_EXECUTING = frozenset(
    "echo printf cat tac ls dir grep egrep fgrep rg ag ack head tail wc sort uniq cut tr sed "
    "awk less more file stat du df touch mkdir rmdir cp mv ln chmod chown diff cmp comm paste "
    "join nl fold fmt column jq yq basename dirname realpath readlink pwd which whereis type "
    "man info help apropos whatis tldr hash test [ true false pip pip3 npm pnpm yarn apt "
    "apt-get brew dnf yum cargo gem go python python3 node git gh tree xxd od hexdump base64 "
    "md5sum sha1sum sha256sum tee mktemp date sleep kill pkill pgrep ps top id whoami".split()
)
"""Programs known not to run their arguments as a command (the unknown-wrapper heuristic
skips them: `grep -r curl src` is not `curl`)."""


class Verdict(IntEnum):
    """How a deny/ask rule relates to a command line."""

    NO = 0
    MAYBE = 1
    MATCH = 2


class Normal(NamedTuple):
    """One invocation in the normal form rules are compared in (see `shell_options`)."""

    program: str
    options: frozenset[str]
    positionals: tuple[str | None, ...]
    """Positional words; None for a word whose value is not static."""
    loose: bool
    """More or other words may be there at run time (dynamic words, globs, open tail)."""
    certain: bool
    text: str
    """The words joined by spaces, a dynamic word as NUL."""


def normalize(words: Sequence[Word], *, open_tail: bool = False, certain: bool = True) -> Normal:
    """The normal form of an argv (program by basename, options canonical)."""
    program = (words[0].value or "").rsplit("/", 1)[-1] if words else ""
    option_words: list[str] = []
    positionals: list[str | None] = []
    loose, ended = open_tail, False
    for word in words[1:]:
        value = word.value
        if value is None or word.glob:
            loose = True
            positionals.append(None if value is None else value)
        elif not ended and value == "--":
            ended = True
        elif not ended and value.startswith("-") and len(value) > 1:
            option_words.append(value)
        else:
            positionals.append(_path_form(value))
    key = table_key(program, positionals[0] if positionals else None)
    options = frozenset(
        name
        for word in option_words
        for part in split_option(program, word)
        for name in canonical(key, part)
    )
    return Normal(program, options, tuple(positionals), loose, certain, _text(words))


def _path_form(value: str) -> str:
    if "/" not in value or "://" in value:
        return value
    collapsed = re.sub("/+", "/", value)
    return posixpath.normpath(collapsed) if collapsed != "/" else "/"


@dataclass(frozen=True, slots=True)
class BashSpec:
    """A compiled Bash rule specifier."""

    kind: Literal["prefix", "exact", "glob"]
    tokens: tuple[str, ...]
    normal: Normal | None
    regex: re.Pattern[str] | None
    fragments: tuple[str, ...]


@lru_cache(maxsize=4096)
def compile_spec(content: str) -> BashSpec:
    """Parse `git push:*`, `npm run *`, `npm test` or `*gcloud*`."""
    spec = content.strip()
    if spec.endswith(":*"):
        return _words_spec("prefix", spec[:-2])
    if spec.endswith(" *") and spec.count("*") == 1:
        return _words_spec("prefix", spec[:-2])
    if "*" in spec:
        regex = re.compile(".*".join(re.escape(part) for part in spec.split("*")), re.DOTALL)
        fragments = tuple(p.strip() for p in spec.split("*") if p.strip())
        return BashSpec("glob", (), None, regex, fragments)
    return _words_spec("exact", spec)


def _words_spec(kind: Literal["prefix", "exact"], text: str) -> BashSpec:
    try:
        tokens = tuple(shlex.split(text))
    except ValueError:
        tokens = tuple(text.split())
    normal = normalize([Word(t) for t in tokens]) if tokens else None
    return BashSpec(kind, tokens, normal, None, ())


def match_normal(spec: BashSpec, command: Normal) -> Verdict:
    """One deny/ask specifier against one invocation."""
    if spec.kind == "glob":
        return _match_glob(spec, command)
    rule = spec.normal
    if rule is None or rule.program != command.program:
        return Verdict.NO
    missing = [o for o in rule.options if not _has_option(command.options, o)]
    positional = _match_positionals(rule, command)
    if spec.kind == "exact" and not command.loose:
        same = rule.options == command.options and len(rule.positionals) == len(command.positionals)
        positional = positional if same else Verdict.NO
    if missing or positional is Verdict.NO:
        return Verdict.MAYBE if command.loose else Verdict.NO
    if positional is Verdict.MAYBE or not command.certain:
        return Verdict.MAYBE
    return Verdict.MATCH


def _has_option(options: frozenset[str], wanted: str) -> bool:
    if wanted in options:
        return True
    if not wanted.startswith("--"):
        return False
    return any(o.startswith("--") and len(o) >= 4 and wanted.startswith(o) for o in options)


def _match_positionals(rule: Normal, command: Normal) -> Verdict:
    wanted, have = rule.positionals, command.positionals
    if not wanted:
        return Verdict.MATCH
    verdict = Verdict.MATCH
    if rule.program in SUBCOMMAND_PROGRAMS:
        if not have:
            return Verdict.NO
        first = _same(wanted[0], have[0])
        if first is Verdict.NO:
            return Verdict.NO
        verdict, wanted, have = first, wanted[1:], have[1:]
    rest = _subsequence(wanted, have)
    return min(verdict, rest)


def _same(rule_word: str | None, word: str | None) -> Verdict:
    if word is None:
        return Verdict.MAYBE
    if rule_word is None:
        return Verdict.NO
    if any(c in rule_word for c in "*?["):
        return Verdict.MATCH if fnmatchcase(word, rule_word) else Verdict.NO
    return Verdict.MATCH if rule_word == word else Verdict.NO


def _subsequence(wanted: Sequence[str | None], have: Sequence[str | None]) -> Verdict:
    i = 0
    for word in have:
        if i < len(wanted) and _same(wanted[i], word) is Verdict.MATCH:
            i += 1
    if i == len(wanted):
        return Verdict.MATCH
    return Verdict.MAYBE if any(w is None for w in have) else Verdict.NO


def _match_glob(spec: BashSpec, command: Normal) -> Verdict:
    regex = spec.regex
    assert regex is not None
    if regex.fullmatch(command.text):
        return Verdict.MATCH if command.certain else Verdict.MAYBE
    if "\0" in command.text:
        for fragment in (*spec.fragments, ""):
            if regex.fullmatch(command.text.replace("\0", fragment)):
                return Verdict.MAYBE
    return Verdict.NO


class _Index:
    """One line's invocations by program, normalised on first use, plus the words after an
    unknown program that could start a command it runs (the unknown-wrapper heuristic)."""

    def __init__(self, analysis: ShellAnalysis) -> None:
        self.analysis = analysis
        self.by_program: dict[str, list[Invocation]] = {}
        self.suffixes: dict[str, list[tuple[Invocation, int]]] = {}
        self._normal: dict[int, Normal] = {}
        self._texts: tuple[Normal, ...] | None = None
        self.foreign: list[tuple[Run, frozenset[str]]] = [
            (run, code_tokens(" ".join([run.word.value or "", *(w.value or "" for w in run.argv)])))
            for run in analysis.foreign
            if run.word is not None
        ]
        self.foreign_words: frozenset[str] = frozenset().union(*(t for _, t in self.foreign))
        for inv in analysis.invocations:
            program = (inv.words[0].value or "").rsplit("/", 1)[-1]
            self.by_program.setdefault(program, []).append(inv)
            if program and not _known(program):
                for k, word in enumerate(inv.words[1:], start=1):
                    if word.static and word.value and not word.value.startswith("-"):
                        name = word.value.rsplit("/", 1)[-1]
                        self.suffixes.setdefault(name, []).append((inv, k))

    def normals(self, program: str) -> list[Normal]:
        """The invocations of `program`, normalised."""
        out = []
        for inv in self.by_program.get(program, ()):
            normal = self._normal.get(id(inv))
            if normal is None:
                normal = normalize(inv.words, open_tail=inv.open_tail, certain=inv.certain)
                self._normal[id(inv)] = normal
            out.append(normal)
        return out

    def texts(self) -> tuple[Normal, ...]:
        """Every invocation with just its text (for wildcard rules)."""
        if self._texts is None:
            self._texts = tuple(
                Normal("", frozenset(), (), inv.open_tail, inv.certain, _text(inv.words))
                for inv in self.analysis.invocations
            )
        return self._texts


def _text(words: Sequence[Word]) -> str:
    return " ".join(w.value if w.value is not None else "\0" for w in words)


@lru_cache(maxsize=2048)
def _index(line: str) -> _Index:
    return _Index(analyze(line))


def _known(program: str) -> bool:
    return program in NOT_EXECUTING or program in WRAPPERS or program in SHELLS


def may_concern(content: str, line: str) -> bool:
    """False when the specifier surely does not apply: its program does not occur in the line
    (as a program or after an unknown one) and nothing in the line is unknown. Cheap: lets a
    check skip most of a long rule list without computing verdicts."""
    spec = compile_spec(content)
    if spec.kind == "glob" or spec.normal is None:
        return True
    index = _index(line)
    program = spec.normal.program
    return (
        bool(index.analysis.unknowns)
        or program in index.by_program
        or program in index.suffixes
        or program in index.foreign_words
    )


@lru_cache(maxsize=65536)
def rule_verdict(content: str, line: str) -> tuple[Verdict, str]:
    """How the deny/ask specifier `content` relates to `line`, and why (for MAYBE)."""
    spec = compile_spec(content)
    index = _index(line)
    best, reason = Verdict.NO, ""
    if spec.kind == "glob":
        candidates: Sequence[Normal] = index.texts()
        assert spec.regex is not None
        if spec.regex.fullmatch(line.strip()):
            return Verdict.MATCH, ""
    else:
        program = spec.normal.program if spec.normal is not None else ""
        candidates = index.normals(program)
    for normal in candidates:
        verdict = match_normal(spec, normal)
        if verdict > best:
            best, reason = verdict, _maybe_reason(normal)
            if best is Verdict.MATCH:
                return best, ""
    if best < Verdict.MAYBE:
        foreign = _foreign_reason(spec, index)
        if foreign:
            return Verdict.MAYBE, foreign
    if spec.normal is not None and best < Verdict.MAYBE:
        for inv, k in index.suffixes.get(spec.normal.program, ()):
            suffix = normalize(inv.words[k:], open_tail=inv.open_tail, certain=False)
            if match_normal(spec, suffix) > Verdict.NO:
                wrapper = inv.words[0].value
                return Verdict.MAYBE, f"{wrapper} may run {suffix.text!r} (an unknown wrapper)"
    if best < Verdict.MAYBE and index.analysis.unknowns:
        return Verdict.MAYBE, index.analysis.unknowns[0]
    return best, reason


def _foreign_reason(spec: BashSpec, index: _Index) -> str:
    """Why inline code of another language may run the rule's program ("" if it cannot): the
    program (for a wildcard rule, the first word of a fragment) appears in it as a word."""
    if not index.foreign:
        return ""
    if spec.normal is not None:
        programs = [spec.normal.program]
    else:
        programs = [fragment.split()[0] for fragment in spec.fragments if fragment.split()]
    for run, words in index.foreign:
        for program in programs:
            if program and program in words:
                return (
                    f"{run.what}: the analysis does not read code in another language, and "
                    f"the rule's program {program!r} appears in it"
                )
    return ""


def _maybe_reason(normal: Normal) -> str:
    text = normal.text.replace("\0", "$…")
    if not normal.certain:
        return f"{text!r} may run after options that are not known"
    return f"{text!r} has words whose value is only known when it runs"


def allow_candidates(contents: Sequence[str], program: str) -> list[str]:
    """The allow specifiers that could approve a command whose first word is `program`."""
    return _allow_index(tuple(contents)).get(program, []) + _allow_index(tuple(contents)).get(
        "", []
    )


@lru_cache(maxsize=64)
def _allow_index(contents: tuple[str, ...]) -> dict[str, list[str]]:
    index: dict[str, list[str]] = {}
    for content in contents:
        spec = compile_spec(content)
        key = spec.tokens[0] if spec.kind != "glob" and spec.tokens else ""
        index.setdefault(key, []).append(content)
    return index


def allow_matches(content: str, command: SimpleCommand) -> bool:
    """Strict: does the allow specifier approve this simple command, word for word?"""
    words = command.words
    if command.assignments or not words or not words[0].static:
        return False
    spec = compile_spec(content)
    if spec.kind == "glob":
        if not all(w.value is not None for w in words):
            return False
        assert spec.regex is not None
        return spec.regex.fullmatch(" ".join(w.value or "" for w in words)) is not None
    tokens = spec.tokens
    if not tokens or len(words) < len(tokens):
        return False
    if spec.kind == "exact" and len(words) != len(tokens):
        return False
    head = words[: len(tokens)] if spec.kind == "prefix" else words
    return all(w.value is not None and w.value == t for w, t in zip(head, tokens, strict=False))
