"""Everything a Bash line may execute: wrappers looked through, nested shell code parsed.

`analyze(line)` (cached by the line's text) returns every *invocation* — an argv that may be
executed — found by:

- each simple command of the line (`shell_parse`), and the same with `VAR=` prefixes dropped;
- the inner command of wrappers (`sudo`, `env`, `timeout`, `xargs`, … see `shell_wrappers`),
  `find … -exec/-execdir/-ok/-okdir … ;|+`, `uv run`, `git -c alias.x=…`;
- code handed to a shell, parsed recursively: `bash|sh|zsh|dash|ksh -c CODE`, `eval`, `su -c`,
  `flock -c`, `watch`, `ssh HOST CMD`, `trap`, `alias`, `source <(echo …)`, and code a shell
  reads from a here-document, a here-string or a piped static `echo`;
- `git` global options (`-C`, `-c`, `--no-pager`, `--git-dir`, …) dropped, so the view
  `git push …` exists for `git -C . push`.

Whatever it cannot see becomes an *unknown* with a reason: a program that is not statically
known (`$X`, `$(…)`, a glob), shell code from a variable or a pipe, an unparsable line, nesting
deeper than `MAX_DEPTH`. Deny rules fail closed on unknowns (`shell_match`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from .env import assignment_runs, executes
from .git import (
    GIT_ARG,
    GIT_FLAG,
    GIT_OPTIONAL_ARG,
    command_line_config,
    environment_config,
    subcommand_runs,
)
from .inline import SHELL_CODE, inline_runs, is_interpreter, shell_code_runs
from .parse import DYNAMIC, ParsedLine, SimpleCommand, Word, parse_line
from .programs import PROGRAMS, program_runs
from .runs import Run, path_tokens
from .wrappers import SUBCOMMAND_WRAPPERS, WRAPPERS, is_assignment, skip_options

MAX_DEPTH = 8
MAX_INVOCATIONS = 4000
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "fish", "rbash", "yash"})
STDIN_NAMES = frozenset({"-", "-s", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
"""A script operand that means "read the code from stdin"."""
_SETS_VARIABLES = frozenset({"read", "mapfile", "readarray", "printf", "getopts"})
"""Builtins that set a variable to a value known only at run time."""
_CHDIR = {"env": ("C", "chdir"), "sudo": ("D", "chdir")}
_GIT_FOLDER = frozenset({"-C", "--work-tree"})
"""Wrapper options that run the command in another folder."""
_FOR_VARIABLE = re.compile(r"\b(?:for|select)\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b")
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_LOOK_INSIDE = (
    SHELLS
    | WRAPPERS.keys()
    | {program for program, _ in SUBCOMMAND_WRAPPERS}
    | SHELL_CODE.keys()
    | {"eval", "source", ".", "find", "git", "sg", "trap", "alias"}
)
"""Programs `_Dispatch` knows how to look inside (others are taken as they are)."""


class Invocation(NamedTuple):
    """One argv that may run."""

    words: tuple[Word, ...]
    open_tail: bool = False
    """More arguments of unknown value are appended at run time (`xargs`, `-exec … +`)."""
    certain: bool = True
    """False when found by trying positions after an option we do not know."""


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    """What a Bash line may execute, and what the analysis could not see."""

    line: str
    top: tuple[SimpleCommand, ...]
    """The line's own simple commands (allow rules must approve each)."""
    invocations: tuple[Invocation, ...]
    hazards: tuple[str, ...]
    """Constructs that keep an allow rule from approving the line."""
    unknowns: tuple[str, ...]
    """Why some program or code could not be determined (deny rules then ask)."""
    paths: tuple[Word, ...] = field(default=())
    """Words that may name files: arguments and redirection targets, nested code included."""
    directories: tuple[Word, ...] = field(default=())
    """Targets of `cd` and `pushd` in the line, in order (relative paths may be relative to
    them)."""
    foreign: tuple[Run, ...] = field(default=())
    """Inline code of other languages (`perl -e`, `python3 -c`, awk programs, …), kept for
    the deny rules' word check (`shell_match`); see `shell_inline`."""
    redirect_writes: tuple[Word, ...] = field(default=())
    """Redirection targets written to (`>`, `>>`, `&>`, …; not `<`), nested code included."""
    assignments: tuple[tuple[str, Word], ...] = field(default=())
    """Every `NAME=value` of the line and its nested code, in order (`HOME=…` changes what
    `~` and a bare `cd` mean to later commands)."""

    @property
    def commands(self) -> tuple[SimpleCommand, ...]:
        """The line's own simple commands (the same as `top`)."""
        return self.top


@lru_cache(maxsize=2048)
def analyze(line: str) -> ShellAnalysis:
    """The analysis of `line` (cached by its text; the result is immutable)."""
    out = _Collector()
    parsed = out.parse(line, 0)
    out.apply(environment_config(out.env), 0, True)  # GIT_CONFIG_KEY_<n> with its VALUE_<n>
    return ShellAnalysis(
        line,
        parsed.commands,
        tuple(out.invocations),
        parsed.hazards,
        tuple(dict.fromkeys(out.unknowns)),
        tuple(out.paths),
        tuple(out.directories),
        tuple(out.foreign),
        tuple(out.redirect_writes),
        tuple(out.assignments),
    )


class _Collector:
    """Accumulates invocations, unknowns and path words over nested code."""

    def __init__(self) -> None:
        self.invocations: list[Invocation] = []
        self.unknowns: list[str] = []
        self.paths: list[Word] = []
        self.directories: list[Word] = []
        self.foreign: list[Run] = []
        self.env: dict[str, Word] = {}
        """Every assignment seen in the line and its nested code (the last value wins)."""
        self.redirect_writes: list[Word] = []
        self.assignments: list[tuple[str, Word]] = []

    def parse(self, code: str, depth: int, certain: bool = True) -> ParsedLine:
        parsed = parse_line(code)
        if parsed.error:
            self.unknowns.append(f"{parsed.error}: {_short(code)}")
        self.paths.extend(parsed.redirect_targets)
        for name, value in parsed.assignments:
            self.assign(name, value, depth, certain)
        if "for" in code or "select" in code:
            for match in _FOR_VARIABLE.finditer(code):
                self.set_at_run_time("a for loop", match.group(1))
        self.redirect_writes.extend(parsed.write_targets)
        for command in parsed.commands:
            self.command(command, depth, certain)
        return parsed

    def assign(self, name: str, value: Word, depth: int, certain: bool) -> None:
        """`NAME=value` anywhere in the line: a later command may inherit it."""
        self.env[name] = value
        self.assignments.append((name, value))
        self.apply(assignment_runs(name, value), depth, certain)

    def set_at_run_time(self, how: str, name: str) -> None:
        if executes(name):
            self.unknowns.append(f"{how} sets {name}, which makes programs run code, at run time")

    def apply(self, runs: Sequence[Run], depth: int, certain: bool) -> None:
        """Follow what a program will run (`shell_runs.Run`)."""
        for run in runs:
            if run.kind == "code":
                self.code(run.word, depth, certain, run.what)
            elif run.kind == "argv":
                self.argv(run.argv, depth, certain)
            elif run.kind == "unknown":
                self.unknowns.append(run.what)
            elif run.word is None or run.word.value is None:
                self.unknowns.append(f"{run.what} is not statically known")
            else:
                self.foreign.append(run)
                self.paths.extend(path_tokens(run.word.value))

    def code(self, word: Word | None, depth: int, certain: bool, what: str) -> None:
        if word is None or word.value is None:
            self.unknowns.append(f"{what} runs shell code that is not statically known")
        elif depth >= MAX_DEPTH:
            self.unknowns.append(f"shell code nested more than {MAX_DEPTH} levels deep")
        else:
            self.parse(word.value, depth + 1, certain)

    def command(self, command: SimpleCommand, depth: int, certain: bool) -> None:
        self.argv(command.words, depth, certain, stdin=command.stdin, piped=command.piped)

    def argv(
        self,
        words: Sequence[Word],
        depth: int,
        certain: bool,
        *,
        open_tail: bool = False,
        stdin: Word | None = None,
        piped: bool = False,
    ) -> None:
        if not words:
            return
        if len(self.invocations) >= MAX_INVOCATIONS:
            self.unknowns.append("the command is too complex to analyse")
            return
        words = tuple(words)
        self.invocations.append(Invocation(words, open_tail, certain))
        self.paths.extend(words[1:])
        program = words[0]
        if program.value is None or program.glob:
            self.unknowns.append(f"the program is not statically known in {_render(words)}")
            return
        name = program.value.rsplit("/", 1)[-1]
        if name in ("cd", "pushd"):
            targets = [w for w in words[1:] if not (w.value or "").startswith("-")]
            self.directories.append(targets[0] if targets else Word("~"))
        if name in ("{", "}", "(", ")", "!"):  # `sudo { rm …; }`: look past the stray word
            self.argv(words[1:], depth, certain, open_tail=open_tail, stdin=stdin, piped=piped)
        elif name in _LOOK_INSIDE:
            _Dispatch(self, words, name, depth, certain, open_tail, stdin, piped).run()
        elif name in _SETS_VARIABLES:
            for word in words[1:]:
                if word.value:
                    self.set_at_run_time(name, word.value)
        elif is_interpreter(name):
            self.apply(inline_runs(name, words, stdin, piped), depth, certain)
        if name in PROGRAMS:  # `ssh -o ProxyCommand=…`, `rsync -e …`, `tar --to-command=…`
            self.apply(program_runs(name, words, stdin, piped), depth, certain)


@dataclass
class _Dispatch:
    """Looks inside one argv whose program is `name`."""

    out: _Collector
    words: tuple[Word, ...]
    name: str
    depth: int
    certain: bool
    open_tail: bool
    stdin: Word | None
    piped: bool

    def run(self) -> None:
        name, words = self.name, self.words
        if name in SHELLS:
            self.shell()
        elif name == "eval":
            self.out.code(_joined(words[1:]), self.depth, self.certain, "eval")
        elif name in ("source", "."):
            self.source()
        elif name == "find":
            self.find()
        elif name == "git":
            self.git()
        elif name in SHELL_CODE:
            runs = shell_code_runs(name, words, self.stdin, self.piped)
            self.out.apply(runs, self.depth, self.certain)
        elif name == "sg":
            self.dash_c(("-c", "--command"))
        elif name == "trap" and len(words) > 1:
            self.out.code(words[1], self.depth, self.certain, "trap")
        elif name == "alias":
            for word in words[1:]:
                if word.value is not None and "=" in word.value:
                    code = Word(word.value.split("=", 1)[1])
                    self.out.code(code, self.depth, self.certain, "alias")
        elif name in WRAPPERS:
            self.wrapper()
        elif len(words) > 1 and (name, words[1].value or "") in SUBCOMMAND_WRAPPERS:
            skipped = skip_options(words, 2, SUBCOMMAND_WRAPPERS[(name, words[1].value or "")])
            self.inner(skipped.index, skipped.certain)

    def inner(self, index: int | None, certain: bool, *, open_tail: bool = False) -> None:
        """Analyse the argv starting at `index`; when unsure, every later position too."""
        if index is None:
            return
        tail = open_tail or self.open_tail
        stdin, piped = self.stdin, self.piped
        if certain:
            self.out.argv(
                self.words[index:],
                self.depth,
                self.certain,
                open_tail=tail,
                stdin=stdin,
                piped=piped,
            )
            return
        for start in range(index, len(self.words)):
            self.out.argv(
                self.words[start:], self.depth, False, open_tail=tail, stdin=stdin, piped=piped
            )

    def wrapper(self) -> None:
        name, words = self.name, self.words
        skipped = skip_options(words, 1, WRAPPERS[name])
        options = dict(skipped.options)
        if WRAPPERS[name].assignments:  # `env VAR=… cmd`, `sudo VAR=… cmd`
            end = skipped.index if skipped.index is not None else len(words)
            for word in words[1:end]:
                if is_assignment(word.value):
                    key, _, value = (word.value or "").partition("=")
                    self.out.assign(key, Word(value), self.depth, self.certain)
        chdir = _CHDIR.get(name, ())
        for key in chdir:  # `env -C DIR cmd`, `sudo -D DIR cmd`: cmd runs in DIR
            if key in options:
                self.out.directories.append(options[key] or DYNAMIC)
        if name == "env" and ("S" in options or "split-string" in options):
            self.env_split(options.get("S") or options.get("split-string"), skipped.index)
        elif name == "flock" and ("c" in options or _at(words, skipped.index, ("-c", "--command"))):
            self.dash_c(("-c", "--command"))
        elif name == "watch" and not ({"x", "exec"} & options.keys()):
            start = skipped.index
            code = _joined(words[start:]) if start is not None else None
            self.out.code(code, self.depth, self.certain, "watch")
        elif name == "ssh":
            start = skipped.index
            if start is not None:
                self.out.code(_joined(words[start:]), self.depth, self.certain, "ssh")
        else:
            if name == "xargs" and skipped.index is None:
                return  # xargs alone runs echo
            self.inner(skipped.index, skipped.certain, open_tail=name == "xargs")

    def env_split(self, value: Word | None, rest: int | None) -> None:
        """`env -S 'STRING' …`: STRING is split into words and read as env's own arguments."""
        if value is None or value.value is None:
            self.out.unknowns.append("env -S splits a string that is not statically known")
            return
        try:
            split = [Word(w) for w in shlex.split(value.value)]
        except ValueError:
            self.out.unknowns.append("env -S splits a string that cannot be parsed")
            return
        tail = list(self.words[rest:]) if rest is not None else []
        if self.depth < MAX_DEPTH:
            self.out.argv([Word("env"), *split, *tail], self.depth + 1, self.certain)

    def shell(self) -> None:
        """`bash [-opts] -c CODE`, `bash` reading a here-doc or a pipe, `bash SCRIPT`."""
        words, i = self.words, 1
        takes_code = False
        while i < len(words):
            value = words[i].value
            if value is None:
                self.out.unknowns.append(f"{self.name} is given options that are not known")
                return
            if value == "--" or not value.startswith(("-", "+")) or value in ("-", "+"):
                i += value == "--"
                break
            if value.startswith("--"):
                i += 2 if value in ("--rcfile", "--init-file") else 1
                continue
            takes_code = takes_code or "c" in value[1:]
            i += 2 if value[-1] in "oO" else 1
        if takes_code:
            code = words[i] if i < len(words) else None
            self.out.code(code, self.depth, self.certain, f"{self.name} -c")
        elif i >= len(words) or (words[i].value in STDIN_NAMES):
            self.stdin_code()
        elif words[i].code is not None:  # `bash <(echo CODE)`
            self.out.code(Word(words[i].code), self.depth, self.certain, self.name)
        elif words[i].value is None:  # `bash <(curl …)`, `sh "$SCRIPT"`
            self.out.unknowns.append(f"{self.name} runs a script that is not statically known")
        # else: `bash script.sh`: a script file, like running ./script.sh

    def stdin_code(self) -> None:
        if self.stdin is not None:
            self.out.code(self.stdin, self.depth, self.certain, self.name)
        elif self.piped:
            self.out.unknowns.append(f"{self.name} reads shell code from a pipe")

    def source(self) -> None:
        if len(self.words) < 2:
            return
        target = self.words[1]
        if target.code is not None:
            self.out.code(Word(target.code), self.depth, self.certain, self.name)
        elif target.value is None:
            self.out.unknowns.append(f"{self.name} reads code that is not statically known")

    def dash_c(self, flags: tuple[str, ...]) -> None:
        words = self.words
        for i, word in enumerate(words[1:], start=1):
            value = word.value or ""
            if value in flags:
                code = words[i + 1] if i + 1 < len(words) else None
                self.out.code(code, self.depth, self.certain, self.name)
                return
            for flag in flags:
                if flag.startswith("--") and value.startswith(flag + "="):
                    self.out.code(Word(value[len(flag) + 1 :]), self.depth, self.certain, self.name)
                    return
        if self.name in ("sg", "flock"):
            self.inner(2 if self.name == "sg" else None, False)

    def find(self) -> None:
        words, i = self.words, 1
        while i < len(words):
            if words[i].value in _FIND_EXEC:
                end = i + 1
                while end < len(words) and words[end].value not in (";", "+"):
                    end += 1
                plus = end < len(words) and words[end].value == "+"
                if end > i + 1:
                    self.out.argv(words[i + 1 : end], self.depth, self.certain, open_tail=plus)
                i = end
            i += 1

    def git(self) -> None:
        """The `git SUBCOMMAND …` view without global options; `-c alias.X=…` resolved."""
        words, i, certain = self.words, 1, self.certain
        aliases: dict[str, Word] = {}
        while i < len(words):
            value = words[i].value
            if value is None:
                certain = False
                i += 1
                continue
            name = value.split("=", 1)[0]
            if name in _GIT_FOLDER:  # `git -C DIR checkout -- f`: f is DIR/f
                self.out.directories.append(_option_value(words, i))
            if name in GIT_ARG and "=" not in value and name not in GIT_OPTIONAL_ARG:
                if value in ("-c", "--config-env") and i + 1 < len(words):
                    _alias(words[i + 1], aliases, dynamic=value == "--config-env")
                    self.out.apply(command_line_config(value, words[i + 1]), self.depth, certain)
                i += 2
            elif name in GIT_ARG or name in GIT_FLAG:
                self.git_attached(name, value, aliases, certain)
                i += 1
            elif value.startswith("-"):
                certain = False
                i += 1
            else:
                break
        if i >= len(words):
            return
        sub, rest = words[i], list(words[i + 1 :])
        if sub.value is not None and sub.value not in aliases:
            self.out.apply(subcommand_runs(sub.value, rest), self.depth, certain)
        if i == 1 and certain:
            return
        if "\0dynamic" in aliases:
            self.out.unknowns.append("git may run an alias that is not statically known")
        if sub.value in aliases:
            self.git_alias(aliases[sub.value], rest, certain)
            return
        self.out.argv([words[0], *words[i:]], self.depth, certain, open_tail=self.open_tail)

    def git_attached(self, name: str, value: str, aliases: dict[str, Word], certain: bool) -> None:
        """A global option with its value attached (`--config-env=K=V`, `--exec-path=D`)."""
        if name == "--config-env" and "alias." in value.lower():
            aliases["\0dynamic"] = DYNAMIC  # an alias whose value is an env variable
        if name == "--config-env":
            setting = Word(value.split("=", 1)[1])
            self.out.apply(command_line_config(name, setting), self.depth, certain)
        elif name == "--exec-path" and "=" in value:
            self.out.unknowns.append(f"git {value} runs git commands from a folder")

    def git_alias(self, value: Word, rest: list[Word], certain: bool) -> None:
        text = value.value or ""
        if value.value is None:
            self.out.unknowns.append("git runs an alias that is not statically known")
        elif text.startswith("!"):
            code = Word(text[1:] + " " + " ".join(shlex.quote(w.value or "") for w in rest))
            self.out.code(code, self.depth, certain, "a git alias")
        else:
            try:
                split = [Word(w) for w in shlex.split(text)]
            except ValueError:
                self.out.unknowns.append("git runs an alias that cannot be parsed")
                return
            self.out.argv([self.words[0], *split, *rest], self.depth, certain)


def _alias(word: Word, aliases: dict[str, Word], *, dynamic: bool = False) -> None:
    value = word.value
    if value is None or (dynamic and "alias." in value.lower()):
        aliases["\0dynamic"] = DYNAMIC
        return
    key, eq, body = value.partition("=")
    if eq and key.lower().startswith("alias."):
        aliases[key[len("alias.") :]] = Word(body)


def _option_value(words: Sequence[Word], i: int) -> Word:
    """The value of the option at `i` (`--opt=VALUE` or `--opt VALUE`)."""
    value = words[i].value or ""
    if "=" in value:
        return Word(value.split("=", 1)[1])
    return words[i + 1] if i + 1 < len(words) else DYNAMIC


def _at(words: Sequence[Word], index: int | None, flags: tuple[str, ...]) -> bool:
    return index is not None and index < len(words) and words[index].value in flags


def _joined(words: Sequence[Word]) -> Word:
    if any(w.value is None for w in words):
        return DYNAMIC
    return Word(" ".join(w.value or "" for w in words))


def _render(words: Sequence[Word]) -> str:
    return _short(" ".join(w.value if w.value is not None else "$…" for w in words))


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 80 else text[:77] + "..."
