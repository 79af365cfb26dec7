"""What the write analysis finds in a Bash line, and the accumulator its handlers fill.

`shell_writes.shell_writes(line)` returns a `ShellWrites`: the files a line writes
(`WriteTarget`), the tokens of programs it cannot see through (`named`), recursive copies, and
`Contents`: programs that write what a file says (an archive's members, a patch's files, an
xargs list), which `write_guard` reads from disk. The per-program handlers
(`shell_writers`) fill a `Writes` through its small methods.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .parse import Word
from .vars import Template

SAFE_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
"""Targets every mode may write (they are not files that keep anything)."""

ContentKind = Literal["tar", "zip", "ar", "gzip", "patch", "list"]
Untracked = Literal["", "untracked", "all"]
TreeKind = Literal[
    "paths",
    "checkout",
    "restore",
    "switch",
    "reset",
    "read-tree",
    "stash-apply",
    "stash-push",
    "index",
]

READERS = frozenset(
    """cat tac less more head tail grep egrep fgrep zgrep rg ag ack ls dir vdir tree wc echo
    printf pwd stat file du df which whereis type whoami id groups date uname hostname diff
    diff3 cmp comm cut nl od hexdump strings md5sum sha1sum sha224sum sha256sum sha384sum
    sha512sum b2sum cksum sum basename dirname realpath readlink test [ [[ true false jq
    column fold fmt paste join expand unexpand rev look seq yes sleep printenv ps pgrep top
    cd pushd popd export set unset local declare typeset readonly shift return exit wait
    jobs hash help mkdir lsof free uptime nproc tput clear ping host dig nslookup
    whatis man info apropos locate tr zcat bzcat xzcat zstdcat""".split()
)
"""Programs whose arguments never name a file they write (`tr` takes no file arguments;
`mkdir` makes an empty folder, which changes nothing a session reads)."""


@dataclass(frozen=True, slots=True)
class WriteTarget:
    """One file (or tree) the line writes, changes or removes."""

    word: str
    """As written (relative to the command's folder; `~` not yet expanded)."""
    program: str
    """What writes it: `redirection`, `cp`, `git config`, …"""
    is_glob: bool = False
    tree: bool = False
    """Everything below it changes too (`rm -r`, `mv` of a folder, `chmod -R`, a link to a
    folder: a later write through the link reaches everything below it)."""
    dest: bool = False
    """A copy's destination: when it is not an existing folder, a recursive copy creates
    everything below it."""
    names: tuple[str, ...] = ()
    """For `find -delete`/`-exec` with `-name PAT`: only files whose name matches one of
    these (case-folded for `-iname`, marked by a leading `\\0`)."""
    existing: bool = False
    """Only protected paths that exist below it change (`git clean` removes files; it never
    creates one), and never the git folder itself."""
    template: Template | None = None
    """For a target known only at run time (in `ShellWrites.late`; `word` is then as written,
    `"$TMPDIR/x"`): its pieces, which the check completes from the session; None there: no
    check can know it (`> "$(cat list)"`), and the write fails closed."""


@dataclass(frozen=True, slots=True)
class Contents:
    """A program that writes the paths a file lists: archive members (`tar -x`, `unzip`),
    a patch's files (`git apply`, `patch`), an `xargs` list. `source` None: the file comes
    from standard input or a pipe, so what it names is unknown."""

    kind: ContentKind
    source: str | None
    program: str
    folder: str = "."
    """Where the paths land, relative to the command's folder (`tar -C DIR`)."""
    strip: int = 0
    """Leading components removed from each path (`tar --strip-components=N`)."""
    prefix: str = ""
    """Put before each path (`git apply --directory=DIR`)."""
    flat: bool = False
    """Each path lands by its last component only (`unzip -j`, the name a gzip header
    stores, which `gunzip -N` restores beside the compressed file)."""


@dataclass(frozen=True, slots=True)
class TreeChange:
    """A git command that rewrites work-tree files from a commit, the index or a stash
    (`git checkout REV -- PATHSPEC`, `git reset --hard`, `git stash pop`, …): which files
    change is what that tree holds, which `git_trees` lists at check time."""

    kind: TreeKind
    program: str
    revs: tuple[str, ...] = ()
    """The commit, tree or stash it reads (none: the index, or HEAD for `reset`)."""
    pathspecs: tuple[str, ...] = ()
    prefix: str = ""
    """`git checkout-index --prefix`, `git read-tree --prefix`: prepended to each path."""
    force: bool = False
    """`git checkout -f`: local changes are discarded too."""
    untracked: Untracked = ""
    """`git stash -u`/`-a`: untracked (and ignored) files are removed too."""
    settled: bool = True
    """False when something else in the line may move a ref or the index first (`git fetch
    && git checkout FETCH_HEAD -- .`): what the tree holds then is not what it holds now."""


@dataclass(frozen=True, slots=True)
class ShellWrites:
    """What a Bash line writes, and what it may write that no parse can tell."""

    targets: tuple[WriteTarget, ...]
    named: tuple[str, ...]
    """Tokens of words of opaque invocations (a program we cannot see through)."""
    copies: tuple[tuple[str, str], ...] = ()
    """(source, destination folder) of recursive copies: the source's contents land there."""
    contents: tuple[Contents, ...] = ()
    opaque: tuple[str, ...] = ()
    """The opaque programs themselves (`python3`, `make`): what they write, no parse can tell."""
    dynamic: bool = False
    """Some target is known only at run time (`> $F`, `xargs rm`, `-exec rm {} +`)."""
    late: tuple[WriteTarget, ...] = ()
    """Targets known only at run time (`WriteTarget.late`): one whose template the check can
    complete (`"$TMPDIR/x"`), or one it cannot (`> "$(cat list)"`, `read f; cp x "$f"`)."""
    trees: tuple[TreeChange, ...] = ()
    """Git commands that rewrite the work tree from what a commit, the index or a stash holds."""


_TOKEN = re.compile(r"[^\s'\"`(),;|&<>{}=\[\]:]+")
_HOME_VAR = re.compile(r"\$\{HOME\}|\$HOME\b")
_PWD_VAR = re.compile(r"\$\{PWD\}|\$PWD\b|\$\(\s*pwd\s*\)|`\s*pwd\s*`")
PROC_CWD = re.compile(r"^/proc/(?:self|thread-self|[0-9]+|\$\$|\$\{?BASHPID\}?)/cwd(?=/|$)")
"""`/proc/self/cwd/x` is `./x` for the shell that opens it."""
_SUBSTITUTION = re.compile(r"^s([/|#,!@%])(?:.*?)\1(.*?)\1[a-zA-Z]*$")


def tokens_of(text: str) -> list[str]:
    """The path-like tokens of `text`, as an opaque program may use them: `$HOME` as `~`,
    `$PWD`/`$(pwd)`/`/proc/self/cwd` as `.`, an attached option value (`-o.mcp.json`,
    `${X:-.mcp.json}`) and a substitution's replacement (`s/x/.mcp.json/`) too."""
    text = _PWD_VAR.sub(".", _HOME_VAR.sub("~", text))
    found: list[str] = []
    for token in _TOKEN.findall(text):
        token = PROC_CWD.sub(".", token)
        found.append(token)
        if token.startswith("-") and len(token) > 2:
            found += [token.lstrip("-"), token[2:]] if token[1] != "-" else [token.lstrip("-")]
        substitution = _SUBSTITUTION.match(token)
        if substitution and substitution.group(2):
            found.append(substitution.group(2))
    return found


class Writes:
    """Accumulates what one line writes over its invocations (handlers call these)."""

    def __init__(self) -> None:
        self.targets: list[WriteTarget] = []
        self.named: list[str] = []
        self.copies: list[tuple[str, str]] = []
        self.contents: list[Contents] = []
        self.opaque: list[str] = []
        """Programs whose writes no parse can tell (shown to the person asked)."""
        self.dynamic = False
        """A program's files are known only at run time: the whole line's tokens are named."""
        self.late: list[WriteTarget] = []
        self.trees: list[TreeChange] = []
        self.moves_refs = 0
        """Git commands in the line that may move a ref or change the index."""

    def word(
        self,
        word: Word,
        program: str,
        *,
        tree: bool = False,
        dest: bool = False,
        existing: bool = False,
        names: tuple[str, ...] = (),
    ) -> None:
        """`word` is written by `program`; one known only at run time is `late`, unless its
        template is all text (`d=.mcp; > "$d.json"`)."""
        if word.value == "{}":
            self.dynamic = True  # `-exec rm {} +`: the files come at run time
            return
        value, template = word.value, word.template
        if value is None and template is not None and all(isinstance(p, str) for p in template):
            value = "".join(p for p in template if isinstance(p, str))
        if value is None:
            shown = word.text or "a word known only at run time"
            late = WriteTarget(shown, program, word.glob, tree, dest, names, existing, template)
            self.late.append(late)
        elif value not in SAFE_TARGETS and not value.startswith("/dev/fd/"):
            self.targets.append(WriteTarget(value, program, word.glob, tree, dest, names, existing))

    def unknown(self, program: str, word: Word) -> None:
        """`program` writes something `word` decides at run time (`dd "$X"`, `tar -C "$D"`)."""
        shown = word.text or "a word known only at run time"
        self.late.append(WriteTarget(shown, program))

    def path(self, text: str, program: str, *, tree: bool = False) -> None:
        """A static path the program writes (not a word of the line: `~/.config/...`)."""
        self.targets.append(WriteTarget(text, program, tree=tree))

    def tokens(self, text: str | None) -> None:
        """An opaque program's text: its tokens are named (None: the line is dynamic)."""
        if text is None:
            self.dynamic = True
            return
        self.named.extend(tokens_of(text))

    def content(self, contents: Contents) -> None:
        """A program that writes what a file lists."""
        self.contents.append(contents)

    def tree(self, change: TreeChange) -> None:
        """A git command that rewrites the work tree from a tree git holds."""
        self.trees.append(change)

    def runs(self, program: str, text: str | None) -> None:
        """`program` runs a command given as text (`tar --to-command`, `man -P`): what it
        writes no parse can tell, so its tokens are named."""
        self.opaque.append(program)
        self.tokens(text)

    def result(self) -> ShellWrites:
        trees = tuple(dict.fromkeys(self.trees))
        if self.opaque or self.moves_refs > 1:  # another command may move what they read
            trees = tuple(dataclasses.replace(t, settled=False) for t in trees)
        return ShellWrites(
            tuple(self.targets),
            tuple(dict.fromkeys(self.named)),
            tuple(self.copies),
            tuple(dict.fromkeys(self.contents)),
            tuple(dict.fromkeys(self.opaque)),
            self.dynamic,
            tuple(dict.fromkeys(self.late)),
            trees,
        )


@dataclass(frozen=True, slots=True)
class Options:
    """A command's arguments split into flags, positionals and option values."""

    flags: frozenset[str]
    positionals: tuple[Word, ...]
    values: dict[str, Word]

    def value(self, *keys: str) -> Word | None:
        """The value of the first of `keys` given (`-t`, `--target-directory`)."""
        return next((self.values[k] for k in keys if k in self.values), None)


def split_options(args: Sequence[Word], takes_value: str = "") -> Options:
    """Flags, positional words and option values. `takes_value` lists the options that take
    one (`"-t --target-directory"`); a short one may end a cluster (`-Dt DIR`) or be
    followed by its value in the same word (`-tDIR`, `-o.mcp.json`)."""
    valued = set(takes_value.split())
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
        elif value.startswith("--"):
            key, eq, rest = value.partition("=")
            flags.add(key)
            if eq:
                values[key] = Word(rest, word.glob)
            elif key in valued and i + 1 < len(args):
                values[key] = args[i + 1]
                i += 1
        else:
            i += _cluster(value, word, args, i, valued, flags, values)
        i += 1
    return Options(frozenset(flags), tuple(positionals), values)


def _cluster(
    value: str,
    word: Word,
    args: Sequence[Word],
    i: int,
    valued: set[str],
    flags: set[str],
    values: dict[str, Word],
) -> int:
    """One `-abc` cluster; returns how many following words it consumed."""
    flags.add(value)
    for j, letter in enumerate(value[1:], start=1):
        option = f"-{letter}"
        flags.add(option)
        if option not in valued:
            continue
        rest = value[j + 1 :]
        if rest:
            values[option] = Word(rest, word.glob)
            return 0
        if i + 1 < len(args):
            values[option] = args[i + 1]
            return 1
        return 0
    return 0


def basename_of(text: str) -> str:
    """The last component of a path or URL (`git clone URL` names its folder so)."""
    last = text.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return last.rsplit(":", 1)[-1]


def joined(folder: str, name: str) -> str:
    """`folder/name` as the shell would write it (`.` stays relative)."""
    return os.path.join(folder, name) if folder not in ("", ".") else name


def unabbreviated(args: Sequence[Word], names: str) -> list[Word]:
    """`args` with each long option a program would take as an abbreviation of one of `names`
    spelled out (getopt_long and git's parse-options accept any unique prefix: `tar
    --index=F` is `--index-file=F`, `git archive --out=F` is `--output=F`). A prefix of
    several is taken as the first of them: the real program refuses it, so reading it as the
    one that writes only asks about a line that would fail."""
    known = names.split()
    out: list[Word] = []
    for word in args:
        value = word.value
        if value is None or not value.startswith("--") or value == "--":
            out.append(word)
            continue
        key, eq, rest = value.partition("=")
        if key not in known and len(key) > 4:
            key = next((n for n in known if n.startswith(key)), key)
        out.append(Word(key + eq + rest, word.glob) if eq or key != value else word)
    return out
