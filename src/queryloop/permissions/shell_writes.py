"""Which files a Bash line writes, on the real parse (`shell_unwrap.analyze`).

`shell_writes(line)` (cached by the line's text) lists the *write targets* of every
invocation the line may execute, nested shells and wrappers included:

- output redirections (`>`, `>>`, `>|`, `&>`; not `<`);
- `cp`/`mv`/`install`/`ln`/`rsync` destinations (the last positional, `-t DIR`,
  `--target-directory=DIR`) and, for a destination folder, `DEST/<source name>`; `mv` and
  `rsync --remove-source-files` also remove their sources;
- `tee` files, `sed -i` files, `dd of=`, `truncate`, `sort -o`, `uniq IN OUT`, `curl -o`/`-O`,
  `wget -O`/`-P`, `find -delete` (its starting points, narrowed by `-name`) and `-fprint`;
- deletions and changes of mode or owner: `rm`, `unlink`, `shred`, `rmdir`, `chmod`,
  `chown`, `chgrp`, `touch` (`-r`/`-R` reach a whole tree);
- `git config` writes of a key that makes git run code (`shell_git.config_runs`; →
  `.git/config`, `~/.gitconfig` with `--global`), to a `--file` other than a git config file,
  or `--edit`;
  `git checkout`/`restore`/`rm`/`mv` paths.

Programs known to write nothing their arguments name (`cat`, `grep`, `ls`, `echo`, `git
status`, …) have no targets. Any other program (an interpreter given inline code, an editor,
a build tool) is *opaque*: the tokens of its words are kept in `named`, and the checker asks
when one names a protected path (`python3 -c "open('.mcp.json','w')"`). When a target is only
known at run time (`> $F`, `xargs rm`, `-exec rm {} +`) or the analysis could not see part of
the line, every token of the line is named. What a program writes because of what it reads
(an archive, a patch, a script file, `git checkout BRANCH`) is beyond any parse: the sandbox
mounts protected paths read-only for that (docs/settings.md).
"""

from __future__ import annotations

import glob as globlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from .shell_git import config_runs
from .shell_parse import Word
from .shell_unwrap import SHELLS, Invocation, analyze
from .shell_wrappers import SUBCOMMAND_WRAPPERS, WRAPPERS

MAX_GLOB_MATCHES = 1000
SAFE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
"""Targets every mode may write (they are not files that keep anything)."""

READERS = frozenset(
    """cat tac less more head tail grep egrep fgrep zgrep rg ag ack ls dir vdir tree wc echo
    printf pwd stat file du df which whereis type whoami id groups date uname hostname diff
    diff3 cmp comm cut nl od hexdump strings md5sum sha1sum sha224sum sha256sum sha384sum
    sha512sum b2sum cksum sum basename dirname realpath readlink test [ [[ true false jq
    column fold fmt paste join expand unexpand rev look seq yes sleep printenv ps pgrep top
    cd pushd popd export set unset local declare typeset readonly shift return exit wait
    jobs history hash help mkdir lsof free uptime nproc tput clear ping host dig nslookup
    whatis man info apropos locate tr""".split()
)
"""Programs whose arguments never name a file they write (`tr` takes no file arguments)."""

_SEE_THROUGH = (
    SHELLS
    | WRAPPERS.keys()
    | {program for program, _ in SUBCOMMAND_WRAPPERS}
    | {"eval", "source", ".", "su", "runuser", "sg", "trap", "alias", "{", "}", "(", ")", "!"}
)
"""Programs that only run another command the analysis already lists as an invocation."""

_COPIERS = frozenset({"cp", "mv", "install", "ln", "rsync", "ginstall"})
_ALL_POSITIONALS = frozenset(
    {"rm", "unlink", "shred", "rmdir", "truncate", "touch", "chmod", "chown", "chgrp", "tee"}
)
_TREE_FLAGS = frozenset({"-r", "-R", "--recursive"})
_VALUE_OPTIONS = {
    "cp": "-t --target-directory -S --suffix",
    "mv": "-t --target-directory -S --suffix",
    "ln": "-t --target-directory -S --suffix",
    "install": "-t --target-directory -S --suffix -m --mode -o --owner -g --group",
    "ginstall": "-t --target-directory -S --suffix -m --mode -o --owner -g --group",
    "rsync": "-e --rsh --exclude --include --filter -f --files-from --exclude-from "
    "--include-from --rsync-path --log-file --partial-dir --temp-dir -T --backup-dir "
    "--compare-dest --copy-dest --link-dest --chmod --chown --usermap --groupmap",
    "truncate": "-s --size -r --reference",
    "touch": "-d --date -r --reference -t",
    "chmod": "--reference",
    "chown": "--reference --from",
    "chgrp": "--reference",
    "shred": "-n --iterations -s --size --random-source",
    "sed": "-e --expression -f --file -l --line-length -s --separate",
    "sort": "-o --output -k --key -t --field-separator -S --buffer-size -T "
    "--temporary-directory --parallel --files0-from",
    "tee": "--output-error",
}
_SED_INPLACE = re.compile(r"^-[a-zA-Z]*i|^--in-place")
_TOKEN = re.compile(r"[^\s'\"`(),;|&<>{}=\[\]:]+")
_HOME_VAR = re.compile(r"\$\{HOME\}|\$HOME\b")
_GIT_CONFIG_READS = frozenset(
    "--get --get-all --get-regexp --get-urlmatch --list -l --get-color --get-colorbool "
    "--show-origin --show-scope --name-only".split()
)
_GIT_CONFIG_WRITES = frozenset(
    "--unset --unset-all --add --replace-all --rename-section --remove-section -e --edit".split()
)
_GIT_CONFIG_VERBS = frozenset({"set", "unset", "rename-section", "remove-section", "edit"})


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """One file (or tree) the line writes, changes or removes."""

    word: str
    """As written (relative to the command's folder; `~` not yet expanded)."""
    program: str
    """What writes it: `redirection`, `cp`, `git config`, …"""
    is_glob: bool = False
    tree: bool = False
    """Everything below it changes too (`rm -r`, `mv` of a folder, `chmod -R`)."""
    dest: bool = False
    """A copy's destination: when it is not an existing folder, a recursive copy creates
    everything below it."""
    names: tuple[str, ...] = ()
    """For `find -delete -name PAT`: only files whose name matches one of these."""


@dataclass(frozen=True, slots=True)
class ShellWrites:
    """What a Bash line writes, and what it may write that no parse can tell."""

    targets: tuple[WriteTarget, ...]
    named: tuple[str, ...]
    """Tokens of words of opaque invocations (a program we cannot see through)."""
    copies: tuple[tuple[str, str], ...] = ()
    """(source, destination folder) of recursive copies: the source's contents land there."""


@lru_cache(maxsize=2048)
def shell_writes(line: str) -> ShellWrites:
    """The write targets of `line` (cached by its text; the result is immutable)."""
    analysis = analyze(line)
    out = _Writes()
    for word in analysis.redirect_writes:
        out.word(word, "redirection")
    for invocation in analysis.invocations:
        out.invocation(invocation)
    for command in analysis.top:
        program = _program(command.words[0])
        if command.stdin is not None and program is not None and _opaque(program):
            out.tokens(command.stdin.value)
    if analysis.unknowns or out.dynamic:
        out.tokens(line)
    return ShellWrites(tuple(out.targets), tuple(dict.fromkeys(out.named)), tuple(out.copies))


class _Writes:
    """Accumulates targets over the invocations of one line."""

    def __init__(self) -> None:
        self.targets: list[WriteTarget] = []
        self.named: list[str] = []
        self.copies: list[tuple[str, str]] = []
        self.dynamic = False

    def word(self, word: Word, program: str, *, tree: bool = False, dest: bool = False) -> None:
        if word.value is None or word.value == "{}":
            self.dynamic = True  # known only at run time: the whole line's tokens are named
        elif word.value not in SAFE_TARGETS:
            self.targets.append(WriteTarget(word.value, program, word.glob, tree, dest))

    def tokens(self, text: str | None) -> None:
        if text is None:
            self.dynamic = True
            return
        self.named.extend(_TOKEN.findall(_HOME_VAR.sub("~", text)))

    def invocation(self, inv: Invocation) -> None:
        words = inv.words
        name = _program(words[0])
        if name is None:
            self.dynamic = True
            return
        if inv.open_tail and name not in READERS and name not in _SEE_THROUGH:
            self.dynamic = True  # `xargs rm`, `-exec rm {} +`: the files come at run time
        if name in READERS or name in _SEE_THROUGH:
            return
        handler = _HANDLERS.get(name)
        if handler is not None:
            handler(self, name, words[1:])
        else:
            for word in words[1:]:
                self.tokens(word.value)

    # -- programs --------------------------------------------------------------------------

    def copier(self, name: str, args: Sequence[Word]) -> None:
        flags, positionals, values = _split(name, args)
        target_dir = values.get("-t") or values.get("--target-directory")
        tree = bool(flags & {"-r", "-R", "-a", "--recursive", "--archive"}) or name == "rsync"
        if target_dir is not None:
            dest, sources = target_dir, list(positionals)
        elif len(positionals) >= 2 or (name == "ln" and positionals):
            dest = positionals[-1] if len(positionals) >= 2 else Word(".")
            sources = positionals[:-1] if len(positionals) >= 2 else positionals
        else:
            return
        if name == "install" and "-d" in flags:
            for word in positionals:
                self.word(word, name)
            return
        self.word(dest, name, dest=True)
        removes = name == "mv" or "--remove-source-files" in flags
        for source in sources:
            if source.value is not None and dest.value is not None:
                base = os.path.basename(source.value.rstrip("/")) or source.value
                self.word(Word(os.path.join(dest.value, base), dest.glob), name)
                if tree:
                    self.copies.append((source.value, dest.value))
            if removes:
                self.word(source, name, tree=True)

    def every(self, name: str, args: Sequence[Word]) -> None:
        flags, positionals, _ = _split(name, args)
        if name in ("chmod", "chown", "chgrp") and positionals and "--reference" not in flags:
            positionals = positionals[1:]  # the mode or the owner
        tree = bool(flags & _TREE_FLAGS) or name == "rmdir"
        for word in positionals:
            self.word(word, name, tree=tree)

    def sed(self, name: str, args: Sequence[Word]) -> None:
        flags, positionals, values = _split(name, args)
        scripts = [w for k, w in values.items() if k in ("-e", "--expression")]
        if not scripts and positionals:
            scripts, positionals = [positionals[0]], positionals[1:]
        for script in scripts:  # `w FILE` inside a script writes FILE
            self.tokens(script.value)
        if any(_SED_INPLACE.match(f) for f in flags):
            for word in positionals:
                self.word(word, "sed -i")

    def dd(self, name: str, args: Sequence[Word]) -> None:
        for word in args:
            if word.value is not None and word.value.startswith("of="):
                self.word(Word(word.value[3:], word.glob), name)
            elif word.value is None:
                self.dynamic = True

    def output_option(self, name: str, args: Sequence[Word]) -> None:
        """`sort -o F`, `uniq IN OUT`, `xxd IN OUT`."""
        _, positionals, values = _split(name, args)
        for key in ("-o", "--output"):
            if key in values:
                self.word(values[key], name)
        if name in ("uniq", "xxd") and len(positionals) >= 2:
            self.word(positionals[1], name)

    def fetcher(self, name: str, args: Sequence[Word]) -> None:
        """`curl -o F`/`-O` (the URL's last segment), `wget -O F`/`-P DIR`."""
        options = ("-o", "--output") if name == "curl" else ("-O", "--output-document")
        remote = "-O" if name == "curl" else ""
        urls: list[Word] = []
        folder = "."
        i = 0
        while i < len(args):
            value = args[i].value or ""
            key, eq, rest = value.partition("=")
            if value in options or (key in options and eq):
                target = Word(rest) if eq else (args[i + 1] if i + 1 < len(args) else None)
                if target is not None:
                    self.word(target, name)
                i += 1 if eq else 2
                continue
            if name == "wget" and value in ("-P", "--directory-prefix"):
                folder = args[i + 1].value or "." if i + 1 < len(args) else "."
                i += 2
                continue
            if value.startswith(("http:", "https:", "ftp:", "file:")):
                urls.append(args[i])
            elif value == remote or value == "--remote-name" or value.startswith("-O"):
                remote = "yes"
            i += 1
        if name == "wget" or remote == "yes":
            for url in urls:
                last = (url.value or "").split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
                if last:
                    self.word(Word(os.path.join(folder, last)), name)

    def find(self, name: str, args: Sequence[Word]) -> None:
        starts: list[Word] = []
        i = 0
        while i < len(args) and not (args[i].value or "-").startswith(("-", "(", "!")):
            starts.append(args[i])
            i += 1
        expression = [w.value or "" for w in args[i:]]
        for j, value in enumerate(expression):
            if value in ("-fprint", "-fprint0", "-fprintf", "-fls") and j + 1 < len(expression):
                self.word(args[i + j + 1], name)
        if "-delete" not in expression:
            return
        alternatives = {"-o", "-or", "!", "-not", ","} & set(expression)
        names = tuple(
            expression[j + 1]
            for j, value in enumerate(expression)
            if value in ("-name", "-iname") and j + 1 < len(expression)
        )
        for start in starts or [Word(".")]:
            if start.value is None:
                self.dynamic = True
                continue
            narrow = names if names and not alternatives else ()
            self.targets.append(
                WriteTarget(start.value, "find -delete", start.glob, tree=True, names=narrow)
            )

    def git(self, name: str, args: Sequence[Word]) -> None:
        if not args or (args[0].value or "-").startswith("-"):
            return  # global options: the analysis lists the view without them
        sub, rest = args[0].value, args[1:]
        if sub == "config":
            self.git_config(rest)
        elif sub in ("checkout", "restore", "rm", "mv"):
            _, positionals, _ = _split("git " + sub, rest)
            for word in positionals:
                self.word(word, f"git {sub}", tree=sub in ("rm", "mv"))

    def git_config(self, args: Sequence[Word]) -> None:
        """A `git config` write whose key makes git run code (`core.hooksPath`,
        `core.pager`, `alias.x '!…'`, … as `shell_git` knows them), whose file is not a
        git config file (`--file .gitmodules`), or that opens an editor on it (`--edit`)."""
        values = [w.value for w in args]
        if any(v is None for v in values):
            self.dynamic = True
            return
        texts = [v or "" for v in values]
        options: set[str] = set()
        positionals: list[str] = []
        file: str | None = None
        i = 0
        while i < len(texts):
            text = texts[i]
            if text in ("-f", "--file", "--blob", "--type", "--default", "--comment"):
                file = texts[i + 1] if text in ("-f", "--file") and i + 1 < len(texts) else file
                i += 2
                continue
            keyed = [p for p in positionals if p not in _GIT_CONFIG_VERBS]
            if keyed:  # after the key every word is a value (`alias.l '-c x=y log'`)
                positionals.append(text)
            elif text.startswith("--file="):
                file = text[len("--file=") :]
            elif text.startswith("-"):
                options.add(text.split("=", 1)[0])
            else:
                positionals.append(text)
            i += 1
        if positionals[:1] in (["get"], ["list"]) or options & _GIT_CONFIG_READS:
            return
        if positionals[:1] and positionals[0] in _GIT_CONFIG_VERBS:
            options.add("--" + positionals.pop(0))
        if not (options & (_GIT_CONFIG_WRITES | {"--set", "--edit"}) or len(positionals) >= 2):
            return  # `git config KEY` reads the value
        key = positionals[0] if positionals else ""
        value = positionals[1] if len(positionals) > 1 else None
        runs_code = bool(options & {"--edit", "-e"}) or _config_runs_code(key, value)
        if file is not None:
            if runs_code or os.path.basename(file) not in ("config", ".gitconfig"):
                self.word(Word(file), "git config")
        elif runs_code:
            target = "~/.gitconfig" if "--global" in options else ".git/config"
            self.word(Word("/etc/gitconfig" if "--system" in options else target), "git config")


def _config_runs_code(key: str, value: str | None) -> bool:
    """Does setting `key` make git run code later? A plain alias (`alias.st status`) runs a
    git subcommand; one starting with `!` or passing `-c` runs what it says."""
    if key.lower().startswith("alias."):
        words = (value or "").split()
        return (
            value is None
            or (value or "").startswith("!")
            or "-c" in words
            or any(w.startswith("--config-env") for w in words)
        )
    return bool(config_runs(key, Word(value) if value is not None else None, "git config"))


_HANDLERS = {
    **dict.fromkeys(_COPIERS, _Writes.copier),
    **dict.fromkeys(_ALL_POSITIONALS, _Writes.every),
    "sed": _Writes.sed,
    "dd": _Writes.dd,
    "sort": _Writes.output_option,
    "uniq": _Writes.output_option,
    "xxd": _Writes.output_option,
    "curl": _Writes.fetcher,
    "wget": _Writes.fetcher,
    "find": _Writes.find,
    "git": _Writes.git,
}


def _program(word: Word) -> str | None:
    if word.value is None or word.glob:
        return None
    return word.value.rsplit("/", 1)[-1]


def _opaque(name: str) -> bool:
    return name not in READERS and name not in _SEE_THROUGH and name not in _HANDLERS


def _split(name: str, args: Sequence[Word]) -> tuple[set[str], list[Word], dict[str, Word]]:
    """Flags, positional words and option values (`-t DIR`, `--target-directory=DIR`)."""
    takes_value = set(_VALUE_OPTIONS.get(name, "").split())
    flags: set[str] = set()
    positionals: list[Word] = []
    values: dict[str, Word] = {}
    i, only_positionals = 0, False
    while i < len(args):
        word = args[i]
        value = word.value
        if only_positionals or value is None or not value.startswith("-") or value == "-":
            positionals.append(word)
        elif value == "--":
            only_positionals = True
        elif "=" in value and value.startswith("--"):
            key, _, rest = value.partition("=")
            flags.add(key)
            values[key] = Word(rest, word.glob)
        elif value in takes_value:
            flags.add(value)
            if i + 1 < len(args):
                values[value] = args[i + 1]
            i += 1
        elif not value.startswith("--") and len(value) > 2 and f"-{value[1]}" in takes_value:
            flags.add(value[:2])
            values[value[:2]] = Word(value[2:], word.glob)  # `-tDIR`
        else:
            flags.add(value)
            if not value.startswith("--"):
                flags.update(f"-{c}" for c in value[1:])
        i += 1
    return flags, positionals, values


def bases(directories: Sequence[str | None], cwd: str) -> list[str]:
    """The folders a relative path in the command may be relative to: the working folder and
    every static `cd`/`pushd` target (each alone and one after the other)."""
    found, current = [cwd], cwd
    for target in directories:
        if target is None:
            continue
        target = os.path.expanduser(target)
        current = os.path.normpath(os.path.join(current, target))
        for base in (current, os.path.normpath(os.path.join(cwd, target))):
            if base not in found:
                found.append(base)
    return found


def expand(word: str, is_glob: bool, folders: list[str], *, home: str | None = None) -> list[str]:
    """Absolute path strings the word may name (a glob: its matches in each base folder)."""
    if word == "~" or word.startswith("~/"):
        word = (home or os.path.expanduser("~")) + word[1:]
    elif word.startswith("~"):
        word = os.path.expanduser(word)
    if os.path.isabs(word):
        folders = folders[:1]
    if not is_glob:
        return [os.path.normpath(os.path.join(base, word)) for base in folders]
    found: list[str] = []
    for base in folders:
        matches = globlib.glob(word, root_dir=base, include_hidden=True, recursive=True)
        found += [os.path.join(base, m) for m in matches[:MAX_GLOB_MATCHES]]
    return found or [os.path.join(base, word) for base in folders]
