"""Which files a Bash line writes, on the real parse (`shell_unwrap.analyze`).

`shell_writes(line)` (cached by the line's text) lists the *write targets* of every
invocation the line may execute, nested shells and wrappers included:

- output redirections (`>`, `>>`, `>|`, `&>`, `<>`; not `<`), here-documents' too;
- what each program known to write writes (`shell_writers`: `cp`/`mv`/`install`/`ln`/
  `rsync` destinations and linked sources, `tee`, `sed -i`, `dd of=`, `curl -o`, `wget`,
  `find -delete`/`-exec`, `rm`/`chmod`/…, gzip and friends, `crontab`, `systemctl link`,
  `strace -o`; git's in `shell_writes_git`);
- *contents*: archives extracted (`tar -x`, `unzip`), patches applied (`git apply`,
  `patch`) and `xargs` lists, whose paths `write_guard` reads from the file (or, from a
  pipe, cannot know).

Programs known to write nothing their arguments name (`cat`, `grep`, `ls`, `echo`, `git
status`, …) have no targets. Any other program (an interpreter given inline code, an editor,
a build tool) is *opaque*: the tokens of its words are kept in `named`, and the checker asks
when one names a protected path (`python3 -c "open('.mcp.json','w')"`). When a target is only
known at run time (`xargs rm`, `-exec rm {} +`) or the analysis could not see part of the
line, every token of the line is named. A target word made of variables is completed from
what the line assigns (`F=.mcp.json; echo x > $F`, `shell_vars`); one that is not
(`> "$(cat list)"`, `read f; cp x "$f"`) is *late*, and `write_guard` fails closed on it.
Archivers and compressors are in `shell_archives`; git commands that rewrite the work tree
from a commit, the index or a stash (`git checkout REV -- .`, `git stash pop`) are
`TreeChange`s (`shell_git_trees`), which `write_trees` lists with git at check time. What a
program writes because of what it reads beyond that (a script file, `git pull`) is beyond
any parse: the sandbox mounts protected paths read-only for that (docs/settings.md).
"""

from __future__ import annotations

import glob as globlib
import os
import re
from collections.abc import Callable, Sequence
from functools import lru_cache

import bracex

from .archives import python_module
from .parse import SimpleCommand, Word
from .unwrap import SHELLS, Invocation, ShellAnalysis, analyze
from .vars import resets, set_in
from .wrappers import SUBCOMMAND_WRAPPERS, WRAPPERS, skip_options
from .write_model import (
    PROC_CWD,
    READERS,
    SAFE_TARGETS,
    Contents,
    ShellWrites,
    Writes,
    WriteTarget,
)
from .writers import HANDLERS, READER_OUTPUTS, WRAPPER_OUTPUTS

__all__ = [
    "READERS",
    "SAFE_TARGETS",
    "Contents",
    "ShellWrites",
    "WriteTarget",
    "bases",
    "expand",
    "session_fixed",
    "shell_writes",
]

MAX_GLOB_MATCHES = 1000
_PYTHON = re.compile(r"^(?:python|pypy)[0-9.]*$")
MAX_BRACE_WORDS = 256

_SEE_THROUGH = (
    SHELLS
    | WRAPPERS.keys()
    | {"eval", "source", ".", "su", "runuser", "sg", "trap", "alias", "{", "}", "(", ")", "!"}
)
"""Programs that only run another command the analysis already lists as an invocation."""


@lru_cache(maxsize=2048)
def shell_writes(line: str) -> ShellWrites:
    """The write targets of `line` (cached by its text; the result is immutable)."""
    analysis = analyze(line)
    out = Writes()

    def fold(word: Word) -> Word:
        return _folded(word, lambda name: session_fixed(line, name))

    for word in analysis.redirect_writes:
        out.word(fold(word), "redirection")
    for invocation in analysis.invocations:
        _invocation(out, invocation._replace(words=tuple(fold(w) for w in invocation.words)))
    for command in analysis.top:
        program = _program(command.words[0])
        if program == "xargs":
            _xargs(out, command)
        elif command.stdin is not None and program is not None and _opaque(program):
            out.tokens(command.stdin.value)
    if analysis.unknowns or out.dynamic:
        out.tokens(line)
    return out.result()


_FOLDS = {"HOME": "~", "PWD": "."}


def _folded(word: Word, fixed: Callable[[str], bool]) -> Word:
    """A word known only at run time as the static word the handlers read, when its
    template is all text (`d=.git/hooks; cp x "$d"`) or starts with `$HOME`/`$PWD` the line
    leaves alone (`~/…`, `./…`: the check places them as it places `~` and `.`)."""
    template = word.template
    if word.value is not None or not template:
        return word
    first, rest = template[0], template[1:]
    if not all(isinstance(p, str) for p in rest):
        return word
    tail = "".join(p for p in rest if isinstance(p, str))
    if isinstance(first, str):
        return Word(first + tail, word.glob)
    placed = tail == "" or tail.startswith("/")
    if first.name not in _FOLDS or not placed or not fixed(first.name):
        return word
    return Word(_FOLDS[first.name] + tail, word.glob)


def session_fixed(line: str, name: str, *, assignments: bool = True) -> bool:
    """Whether `$NAME` in `line` (nested code included) is the session's: nothing in the
    line may set NAME (`assignments` False: but a `NAME=` the caller reads itself)."""
    return not set_in(line, name, assignments=assignments) and not _resets(analyze(line))


def _resets(analysis: ShellAnalysis) -> bool:
    """Whether some command may set any variable (`eval`, `source`, `read "$n"`, …)."""
    return any(resets([w.value for w in inv.words]) for inv in analysis.invocations)


def _invocation(out: Writes, inv: Invocation) -> None:
    words = inv.words
    name = _program(words[0])
    if name is None:
        out.dynamic = True
        return
    if name in WRAPPER_OUTPUTS:
        WRAPPER_OUTPUTS[name](out, name, words[1:])
    if _see_through(name, words):
        return
    if inv.open_tail and name not in READERS:
        out.dynamic = True  # `xargs rm`, `-exec rm {} +`: the files come at run time
    if name in READERS:
        if name in READER_OUTPUTS:
            READER_OUTPUTS[name](out, name, words[1:])
        return
    handler = HANDLERS.get(name)
    if handler is not None:
        handler(out, name, words[1:])
    elif _PYTHON.match(name) and python_module(out, name, words[1:]):
        return
    else:
        out.opaque.append(name)
        for word in words[1:]:
            out.tokens(word.value)


def _see_through(name: str, words: Sequence[Word]) -> bool:
    """A wrapper or shell whose command is an invocation of its own (`uv run CMD`, not
    `uv pip install --target DIR`)."""
    if name in _SEE_THROUGH:
        return True
    return len(words) > 1 and (name, words[1].value or "") in SUBCOMMAND_WRAPPERS


def _xargs(out: Writes, command: SimpleCommand) -> None:
    """`xargs PROGRAM`: when PROGRAM writes, its files are the list xargs reads — a
    static `echo` (named), `-a FILE` (read by `write_guard`), or a pipe or redirection
    whose content is unknown."""
    words = command.words
    skipped = skip_options(words, 1, WRAPPERS["xargs"])
    if skipped.index is None:
        return
    inner = _program(words[skipped.index])
    if inner is None or inner in READERS or inner in _SEE_THROUGH:
        return
    options = dict(skipped.options)
    listed = options.get("a") or options.get("arg-file")
    if listed is not None:
        out.content(Contents("list", listed.value, f"xargs {inner}"))
    elif command.stdin is not None and command.stdin.value is not None:
        out.tokens(command.stdin.value)
    else:
        out.content(Contents("list", None, f"xargs {inner}"))


def _program(word: Word) -> str | None:
    if word.value is None or word.glob:
        return None
    return word.value.rsplit("/", 1)[-1]


def _opaque(name: str) -> bool:
    return name not in READERS and name not in _SEE_THROUGH and name not in HANDLERS


def bases(directories: Sequence[str | None], cwd: str, *, home: str | None = None) -> list[str]:
    """The folders a relative path in the command may be relative to: the working folder and
    every static `cd`/`pushd`/`env -C`/`git -C` target (each alone and one after the other;
    one known only at run time is skipped: `write_guard` fails closed on it)."""
    found, current = [cwd], cwd
    for target in directories:
        if target is None:
            continue
        target = _tilde(target, home)
        current = os.path.normpath(os.path.join(current, target))
        for base in (current, os.path.normpath(os.path.join(cwd, target))):
            if base not in found:
                found.append(base)
    return found


def expand(word: str, is_glob: bool, folders: list[str], *, home: str | None = None) -> list[str]:
    """Absolute path strings the word may name: its brace expansions (`settings{,.local}.json`),
    `/proc/self/cwd/` as the folder, and a glob's matches in each base folder."""
    found: list[str] = []
    for one in _braces(word):
        found += _expand_one(PROC_CWD.sub(".", _tilde(one, home)), is_glob, folders)
    return list(dict.fromkeys(found))


def _expand_one(word: str, is_glob: bool, folders: list[str]) -> list[str]:
    if os.path.isabs(word):
        folders = folders[:1]
    if not is_glob:
        return [os.path.normpath(os.path.join(base, word)) for base in folders]
    found: list[str] = []
    for base in folders:
        matches = globlib.glob(word, root_dir=base, include_hidden=True, recursive=True)
        found += [os.path.join(base, m) for m in matches[:MAX_GLOB_MATCHES]]
    return found or [os.path.join(base, word) for base in folders]


def _tilde(word: str, home: str | None) -> str:
    if word == "~" or word.startswith("~/"):
        return (home or os.path.expanduser("~")) + word[1:]
    return os.path.expanduser(word) if word.startswith("~") else word


def _braces(word: str) -> list[str]:
    """Bash's brace expansion (bracex: a maintained implementation of bash's rules, so
    `{a,b}`, `{1..3}`, nesting and escapes behave as the shell's); a word that would expand
    past `MAX_BRACE_WORDS` is taken as written."""
    if "{" not in word:
        return [word]
    try:
        return list(bracex.expand(word, limit=MAX_BRACE_WORDS)) or [word]
    except (bracex.ExpansionLimitException, ValueError):
        return [word]
