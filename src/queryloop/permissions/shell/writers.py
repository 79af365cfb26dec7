"""What each everyday program writes, from its arguments (the handlers of `shell_writes`).

Each handler reads one invocation's arguments (after the program name) and tells the
`Writes` accumulator the files it writes (`word`, `path`), the opaque text it was given
(`tokens`) or the file whose contents decide what it writes (`content`). Sources: the GNU
coreutils manual (cp, mv, install, ln, dd, sort, truncate, …), sed(1), curl(1), wget(1),
findutils `find`, gzip(1)/xz(1)/zstd(1), tar(1), unzip(1), 7z, cpio(1), patch(1),
crontab(1), systemctl(1), strace(1), GNU time(1), bash(1) (the `history` builtin), and git's
own write subcommands (`shell_writes_git`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

from ..protected import ATJOBS, CRONTABS
from .archives import (
    DECOMPRESSORS,
    ar,
    compressor,
    content,
    cpio,
    sevenzip,
    tar,
    unzip,
    zstdcat,
)
from .parse import Word
from .vars import Ref
from .wrappers import WRAPPERS, skip_options
from .write_model import READERS, Writes, basename_of, joined, split_options, unabbreviated
from .writes_git import git

Handler = Callable[[Writes, str, Sequence[Word]], None]

_COPY_OPTIONS = "-t --target-directory -S --suffix"
_VALUE_OPTIONS = {
    "cp": _COPY_OPTIONS,
    "mv": _COPY_OPTIONS,
    "ln": _COPY_OPTIONS,
    "install": f"{_COPY_OPTIONS} -m --mode -o --owner -g --group",
    "ginstall": f"{_COPY_OPTIONS} -m --mode -o --owner -g --group",
    "rsync": "-e --rsh --exclude --include --filter -f --files-from --exclude-from "
    "--include-from --rsync-path --log-file --partial-dir --temp-dir -T --backup-dir "
    "--compare-dest --copy-dest --link-dest --chmod --chown --usermap --groupmap",
    "truncate": "-s --size -r --reference",
    "touch": "-d --date -r --reference -t",
    "chmod": "--reference",
    "chown": "--reference --from",
    "chgrp": "--reference",
    "shred": "-n --iterations -s --size --random-source",
    "sed": "-e --expression -f --file -l --line-length",
    "sort": "-o --output -k --key -t --field-separator -S --buffer-size -T "
    "--temporary-directory --parallel --files0-from",
    "tee": "--output-error",
}
_TREE_FLAGS = frozenset({"-r", "-R", "--recursive"})
_LINK_FLAGS = frozenset({"-s", "--symbolic", "-l", "--link", "--symbolic-link"})
_SED_INPLACE = re.compile(r"^-[a-zA-Z]*i|^--in-place")


def copier(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`cp`/`mv`/`install`/`ln`/`rsync`: the destination (the last positional, `-t DIR`),
    `DEST/<source name>`, a moved source (removed), and a linked source (a link to a
    protected path lets a later write reach it: `ln -s .queryloop q; echo > q/settings.json`)."""
    options = split_options(args, _VALUE_OPTIONS.get(name, ""))
    flags, positionals = options.flags, list(options.positionals)
    target_dir = options.value("-t", "--target-directory")
    tree = bool(flags & {"-r", "-R", "-a", "--recursive", "--archive"}) or name == "rsync"
    if name == "install" and "-d" in flags:
        for word in positionals:
            out.word(word, name)
        return
    if target_dir is not None:
        dest, sources = target_dir, positionals
    elif len(positionals) >= 2 or (name == "ln" and positionals):
        dest = positionals[-1] if len(positionals) >= 2 else Word(".")
        sources = positionals[:-1] if len(positionals) >= 2 else positionals
    else:
        return
    out.word(dest, name, dest=True)
    removes = name == "mv" or "--remove-source-files" in flags
    links = name == "ln" or bool(flags & _LINK_FLAGS)
    for source in sources:
        if source.value is not None and dest.value is not None:
            base = os.path.basename(source.value.rstrip("/")) or source.value
            out.word(Word(os.path.join(dest.value, base), dest.glob), name, tree=tree)
            if tree:
                out.copies.append((source.value, dest.value))
        if removes:
            out.word(source, name, tree=True)
        if links:
            _link_source(out, name, source, dest, target_dir is not None)


def _link_source(out: Writes, name: str, source: Word, dest: Word, into: bool) -> None:
    """A link's source, relative to the command's folder and (a symbolic link's) to the
    link's own folder."""
    out.word(source, f"{name} (a link to it)", tree=True)
    if source.value is None or dest.value is None or os.path.isabs(source.value):
        return
    folder = dest.value if into else os.path.dirname(dest.value)
    out.word(Word(joined(folder, source.value)), f"{name} (a link to it)", tree=True)
    out.word(Word(joined(dest.value, source.value)), f"{name} (a link to it)", tree=True)


def every(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`rm`, `unlink`, `shred`, `rmdir`, `truncate`, `touch`, `chmod`, `chown`, `tee`: every
    positional (after the mode or owner)."""
    options = split_options(args, _VALUE_OPTIONS.get(name, ""))
    positionals = list(options.positionals)
    if name in ("chmod", "chown", "chgrp") and positionals and "--reference" not in options.flags:
        positionals = positionals[1:]  # the mode or the owner
    tree = bool(options.flags & _TREE_FLAGS) or name == "rmdir"
    for word in positionals:
        out.word(word, name, tree=tree)


def sed(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`sed -i` files, and `w FILE` inside a script."""
    options = split_options(args, _VALUE_OPTIONS["sed"])
    positionals = list(options.positionals)
    scripts = [w for k, w in options.values.items() if k in ("-e", "--expression")]
    if not scripts and positionals:
        scripts, positionals = [positionals[0]], positionals[1:]
    for script in scripts:
        out.tokens(script.value)
    if any(_SED_INPLACE.match(f) for f in options.flags):
        for word in positionals:
            out.word(word, "sed -i")


def dd(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`dd of=FILE`; a word known only at run time may be `of=…` too, unless it starts
    with another key (`if="$SRC"`)."""
    for word in args:
        first = word.template[0] if word.template else None
        if word.value is not None and word.value.startswith("of="):
            out.word(Word(word.value[3:], word.glob), name)
        elif word.template and isinstance(first, str) and first.startswith("of="):
            out.word(word._replace(template=(first[3:], *word.template[1:])), name)
        elif word.value is None and not (isinstance(first, str) and "=" in first):
            out.unknown(name, word)


def output_option(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`sort -o F`, `uniq IN OUT`, `xxd IN OUT`."""
    options = split_options(args, _VALUE_OPTIONS.get(name, "-o --output"))
    target = options.value("-o", "--output")
    if target is not None:
        out.word(target, name)
    if name in ("uniq", "xxd") and len(options.positionals) >= 2:
        out.word(options.positionals[1], name)


def fetcher(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`curl -o F`/`-O` (the URL's last segment, in `--output-dir`), `wget -O F`/`-P DIR`."""
    if name == "curl":
        options = split_options(
            args,
            "-o --output --output-dir -d --data -H --header -u "
            "--user -X --request -A --user-agent -e --referer -b "
            "--cookie -c --cookie-jar -T --upload-file -x --proxy",
        )
        file = options.value("-o", "--output")
        folder = options.value("--output-dir")
        remote = bool(options.flags & {"-O", "--remote-name", "--remote-name-all"})
    else:
        options = split_options(
            args,
            "-O --output-document -P --directory-prefix -o "
            "--output-file -a --append-output -e --execute",
        )
        file = options.value("-O", "--output-document")
        folder = options.value("-P", "--directory-prefix")
        remote = file is None
        for key in ("-o", "--output-file", "-a", "--append-output"):  # wget's log file
            if key in options.values:
                out.word(options.values[key], name)
    if file is not None:
        out.word(file, name)
    if folder is not None and folder.value is None:
        out.word(folder, name, tree=True)  # everything below it may be written
    base = folder.value if folder is not None and folder.value is not None else "."
    if remote:
        for url in options.positionals:
            last = basename_of(url.value or "")
            if last and (url.value or "").startswith(("http:", "https:", "ftp:", "file:")):
                out.word(Word(joined(base, last)), name)


def find(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`find -delete`, and `-exec`/`-execdir`/`-ok` with a program that changes the files
    found (its starting points, narrowed by `-name`/`-iname`); `-fprint FILE`."""
    starts: list[Word] = []
    i = 0
    while i < len(args) and not (args[i].value or "-").startswith(("-", "(", "!")):
        starts.append(args[i])
        i += 1
    expression = [w.value or "" for w in args[i:]]
    for j, value in enumerate(expression):
        if value in ("-fprint", "-fprint0", "-fprintf", "-fls") and j + 1 < len(expression):
            out.word(args[i + j + 1], name)
    if not _find_changes(expression):
        return
    alternatives = {"-o", "-or", "!", "-not", ","} & set(expression)
    names = tuple(
        expression[j + 1] if value == "-name" else "\0" + expression[j + 1].casefold()
        for j, value in enumerate(expression)
        if value in ("-name", "-iname") and j + 1 < len(expression)
    )
    narrow = names if names and not alternatives else ()
    for start in starts or [Word(".")]:
        out.word(start, "find", tree=True, names=narrow)


def _find_changes(expression: list[str]) -> bool:
    if "-delete" in expression:
        return True
    for j, value in enumerate(expression[:-1]):
        if value in ("-exec", "-execdir", "-ok", "-okdir"):
            program = expression[j + 1].rsplit("/", 1)[-1]
            if program not in READERS:
                return True
    return False


def patch(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`patch [FILE [PATCH]]`, `-i PATCH`, `-d DIR`, `-o OUT`: the files the patch names."""
    options = split_options(
        args,
        "-i --input -d --directory -o --output -p --strip -r --reject-file -B "
        "--prefix -F --fuzz -D --ifdef -z --suffix -V --version-control",
    )
    for key in ("-o", "--output", "-r", "--reject-file"):
        if key in options.values:
            out.word(options.values[key], name)
    positionals = options.positionals
    if positionals:
        out.word(positionals[0], name)  # the file to patch, named on the command line
    given = options.value("-i", "--input") or (positionals[1] if len(positionals) > 1 else None)
    source = None if given is None or given.value in (None, "-") else given.value
    content(out, "patch", source, name, options.value("-d", "--directory"))


def crontab(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`crontab FILE`, `crontab -`, `crontab -e` install a table of jobs cron runs later;
    `at`/`batch` queue a job (`atq`, `atrm` and `at -l` only list or remove)."""
    options = split_options(args, "-u -q -f -t")
    if name == "crontab" and not options.flags & {"-l", "-r", "-V"}:
        out.path(str(CRONTABS), name, tree=True)
    elif name in ("at", "batch") and not options.flags & {"-l", "-d", "-r", "-c", "-V"}:
        out.path(str(ATJOBS), name, tree=True)


_UNIT_CHANGES = frozenset(
    "link enable reenable preset edit add-wants add-requires revert set-property".split()
)


def systemctl(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`systemctl [--user] link|enable|edit …` installs a unit that runs at boot or login."""
    options = split_options(args, "-H --host -M --machine -t --type -p --property -s")
    verbs = [w.value for w in options.positionals]
    if verbs and verbs[0] in _UNIT_CHANGES:
        user = "--user" in options.flags
        out.path("~/.config/systemd/user" if user else "/etc/systemd/system", name, tree=True)


def traced(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`strace -o F`, `ltrace -o F`, `time -o F`: the wrapper writes F (the command it runs
    is an invocation of its own)."""
    options = dict(skip_options([Word(name), *args], 1, WRAPPERS[name]).options)
    for key in ("o", "output"):
        value = options.get(key)
        if value is not None:
            out.word(value, name)


_HISTFILE = Word(None, template=(Ref("HISTFILE", quoted=True),), text="$HISTFILE")


def history(out: Writes, name: str, args: Sequence[Word]) -> None:
    """The `history` builtin: `-a` (append) and `-w` (write) write FILE, or the history file
    (`$HISTFILE`) when none is given; `-r`, `-n`, `-c`, `-d`, `-s`, `-p` write no file."""
    options = split_options(args)
    letters = {c for f in options.flags if not f.startswith("--") for c in f[1:]}
    if not letters & {"a", "w"}:
        return
    file = options.positionals[0] if options.positionals else _HISTFILE
    out.word(file, name)


def pager(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`less -o F`/`-O F`/`--log-file=F` copies its input to F (less(1))."""
    args = unabbreviated(args, "--log-file --LOG-FILE")
    options = split_options(args, "-o -O --log-file --LOG-FILE -k --lesskey-file -p -P -x -y")
    for key in ("-o", "-O", "--log-file", "--LOG-FILE"):
        if key in options.values:
            out.word(options.values[key], name)


def tree(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`tree -o F` writes F; `tree -R` writes `00Tree.html` in every folder below its roots
    (tree(1))."""
    options = split_options(args, "-o -L -P -I -H -T --charset --filelimit --timefmt --sort")
    target = options.value("-o")
    if target is not None:
        out.word(target, name)
    if "-R" in options.flags:
        for word in options.positionals or (Word("."),):
            out.word(word, f"{name} -R", tree=True)


def info(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`info -o F`/`--output F` writes the node, `--dribble F` the keystrokes (info(1))."""
    args = unabbreviated(args, "--output --dribble --directory --file --node --restore")
    options = split_options(args, "-o --output --dribble -d --directory -f --file -n --node")
    for key in ("-o", "--output", "--dribble"):
        if key in options.values:
            out.word(options.values[key], name)


def magic(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`file -C [-m MAGIC]` compiles each MAGIC (`:`-separated) into `MAGIC.mgc`, or
    `magic.mgc` in the folder (file(1))."""
    options = split_options(args, "-m --magic-file -F --separator -P --parameter -e --exclude")
    if not options.flags & {"-C", "--compile"}:
        return
    given = options.value("-m", "--magic-file")
    if given is None:
        out.word(Word("magic.mgc"), f"{name} -C")
        return
    if given.value is None:
        out.unknown(name, given)
        return
    for part in given.value.split(":"):
        out.word(Word(part.rstrip("/") + ".mgc", given.glob), f"{name} -C")


_RUNS_OPTIONS = {
    "man": ("-P", "--pager", "-H", "--html", "--preprocessor"),
    "rg": ("--pre", "--hostname-bin"),
    "ag": ("--pager",),
    "ack": ("--pager",),
}
"""Options of programs taken as readers whose value is a program they run."""


def reader_runs(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`man -P CMD`, `rg --pre CMD`, `ag --pager CMD`: the reader runs a program whose
    writes no parse can tell."""
    keys = _RUNS_OPTIONS[name]
    options = split_options(unabbreviated(args, " ".join(keys)), " ".join(keys))
    for key in keys:
        value = options.values.get(key)
        if value is not None:
            out.runs(f"{name} {key}", value.value)
        elif any(w.value is not None and w.value.startswith(key) for w in args):
            out.runs(f"{name} {key}", None)  # an attached value (`-Pcmd`) spelled otherwise


def _compressors() -> dict[str, Handler]:
    names = "gzip pigz bzip2 pbzip2 xz lzma zstd lz4 brotli lzip".split()
    return dict.fromkeys([*names, *DECOMPRESSORS], compressor)


HANDLERS: dict[str, Handler] = {
    **dict.fromkeys(["cp", "mv", "install", "ln", "rsync", "ginstall"], copier),
    **dict.fromkeys(
        ["rm", "unlink", "shred", "rmdir", "truncate", "touch", "chmod", "chown", "chgrp", "tee"],
        every,
    ),
    **_compressors(),
    "sed": sed,
    "dd": dd,
    "sort": output_option,
    "uniq": output_option,
    "xxd": output_option,
    "curl": fetcher,
    "wget": fetcher,
    "find": find,
    "git": git,
    "tar": tar,
    "bsdtar": tar,
    "gtar": tar,
    "unzip": unzip,
    "7z": sevenzip,
    "7za": sevenzip,
    "7zz": sevenzip,
    "cpio": cpio,
    "ar": ar,
    "patch": patch,
    "crontab": crontab,
    "at": crontab,
    "batch": crontab,
    "systemctl": systemctl,
    "history": history,
}
"""Programs whose writes are read from their arguments; any other program not known to
write nothing is opaque."""

READER_OUTPUTS: dict[str, Handler] = {
    "less": pager,
    "tree": tree,
    "info": info,
    "file": magic,
    "zstdcat": zstdcat,
    **dict.fromkeys(_RUNS_OPTIONS, reader_runs),
}
"""Programs taken as readers (`READERS`) that write, or run a program, given some options."""

WRAPPER_OUTPUTS: dict[str, Handler] = dict.fromkeys(["strace", "ltrace", "time"], traced)
"""Wrappers (looked through for the command they run) that also write a file themselves."""
