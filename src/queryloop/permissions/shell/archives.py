"""What archivers and compressors write (handlers of `shell_writes`, beside `shell_writers`).

An extraction writes what the archive holds: the members are `Contents` that `write_guard`
lists from the file (`write_contents`) and places below the folder they land in. What no
listing can place fails closed: a member name rewritten by a sed expression (`tar
--transform`, `bsdtar -s`), an archive read from a pipe, a format the standard library does
not read (`7z`, `cpio`). Writing an archive writes its file; `--remove-files` removes what it
packs; `--index-file`, `-g` and `--volno-file` write where they say, in every mode (`tar -t`
too); `--to-command`, `--checkpoint-action=exec=`, `-I` run a command. Sources: GNU tar(1) and
its manual's option index, bsdtar(1), unzip(1), 7z, cpio(1), GNU ar(1), gzip(1), and
Python's `zipfile`, `tarfile` and `gzip` command-line interfaces.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from .parse import Word
from .write_model import ContentKind, Contents, Writes, split_options, unabbreviated

_TAR_LONG = (
    "--file --directory --files-from --exclude-from --blocking-factor --format "
    "--use-compress-program --strip-components --newer --after-date --listed-incremental "
    "--index-file --volno-file --to-command --checkpoint-action --transform --xform "
    "--rsh-command --info-script --new-volume-script --starting-file --tape-length --label "
    "--exclude --extract --get --create --append --update --catenate --concatenate --delete "
    "--list --remove-files --absolute-names --to-stdout"
)
_TAR_VALUES = (
    "-f --file -C --directory -T --files-from -X --exclude-from -b --blocking-factor -H "
    "--format -I --use-compress-program --strip-components -N --newer --after-date -g "
    "--listed-incremental --index-file --volno-file --to-command --checkpoint-action "
    "--transform --xform --rsh-command -F --info-script --new-volume-script -K "
    "--starting-file -L --tape-length -V --label --exclude"
)
_TAR_EXTRACT = frozenset({"-x", "--extract", "--get"})
_TAR_WRITES = frozenset(
    {"-c", "-r", "-u", "-A", "--create", "--append", "--update", "--catenate", "--concatenate"}
) | {"--delete"}
_TAR_OUTPUTS = ("--index-file", "-g", "--listed-incremental", "--volno-file")
_TAR_RUNS = (
    "--to-command",
    "--checkpoint-action",
    "-I",
    "--use-compress-program",
    "--rsh-command",
    "-F",
    "--info-script",
    "--new-volume-script",
)
_TAR_RENAMES = ("--transform", "--xform")


def tar(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`tar`/`bsdtar`: an extraction's members below `-C DIR` (old-style `tar xzf A` too),
    the archive a creation writes, the files `--remove-files` removes, the output options of
    every mode, and the commands some options run."""
    words = unabbreviated(args, _TAR_LONG)
    if words and words[0].value and not words[0].value.startswith("-"):
        words[0] = Word("-" + words[0].value, words[0].glob)  # `tar xzf a.tgz`
    bsd = name == "bsdtar"
    options = split_options(words, _TAR_VALUES + (" -s" if bsd else ""))
    flags = options.flags
    for key in _TAR_OUTPUTS:
        if key in options.values:
            out.word(options.values[key], name)
    for key in _TAR_RUNS:
        if key in options.values:
            out.runs(f"{name} {key}", options.values[key].value)
    archive = options.value("-f", "--file")
    if flags & _TAR_WRITES and archive is not None:
        out.word(archive, name)
    if "--remove-files" in flags:
        for word in options.positionals:
            out.word(word, f"{name} --remove-files", tree=True)
    if not flags & _TAR_EXTRACT or flags & {"-O", "--to-stdout"}:
        return
    if "-s" in flags or any(
        k in options.values for k in _TAR_RENAMES
    ):  # a sed expression decides every name: no check can evaluate it safely
        out.unknown(f"{name} (names rewritten by a sed expression)", Word(None))
        return
    source = None if archive is None or archive.value in (None, "-") else archive.value
    strip = (options.value("--strip-components") or Word("0")).value or "0"
    count = int(strip) if strip.isdigit() else 0
    content(out, "tar", source, name, options.value("-C", "--directory"), strip=count)


def unzip(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`unzip A [-d DIR]`, `-j` (every member by its last component); listing and printing
    modes write nothing."""
    options = split_options(args, "-d -x -P")
    if options.flags & {"-l", "-t", "-v", "-p", "-c", "-Z", "-z"} or not options.positionals:
        return
    archive = options.positionals[0].value
    flat = "-j" in options.flags
    content(out, "zip", archive, name, options.value("-d"), flat=flat)


def sevenzip(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`7z x A -oDIR`: the members are not read here, so everything below DIR may change."""
    if not args or args[0].value not in ("x", "e"):
        return
    folder = next((Word(w.value[2:]) for w in args if w.value and w.value.startswith("-o")), None)
    content(out, "tar", None, name, folder)


def cpio(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`cpio -i` reads an archive from standard input into `-D DIR`."""
    options = split_options(args, "-D --directory -F --file -E --pattern-file -H --format")
    if options.flags & {"-i", "--extract"}:
        content(out, "tar", None, name, options.value("-D", "--directory"))


_AR_OPERATIONS = re.compile(r"^-?([dmpqrstx])([a-zA-Z]*)$")


def ar(out: Writes, name: str, args: Sequence[Word]) -> None:
    """GNU `ar [--output DIR] [-]KEY[MODIFIERS] [RELPOS] [COUNT] ARCHIVE [MEMBER…]`: `x`
    extracts the members into the folder (or DIR); `d`, `m`, `q`, `r`, `s` rewrite the
    archive (every word after the key is taken as it may be: a relpos or count shifts it);
    `t` and `p` only read. Sources: ar(1)."""
    words = unabbreviated(args, "--output --plugin --target")
    folder: Word | None = None
    rest: list[Word] = []
    i = 0
    while i < len(words):
        value = words[i].value
        if value is not None and value.startswith("--") and not rest:
            if value in ("--output", "--plugin", "--target") and i + 1 < len(words):
                folder = words[i + 1] if value == "--output" else folder
                i += 1
            elif value.startswith("--output="):
                folder = Word(value.split("=", 1)[1], words[i].glob)
        else:
            rest.append(words[i])
        i += 1
    operation = _AR_OPERATIONS.match(rest[0].value or "") if rest else None
    if operation is None:
        out.runs(name, " ".join(w.value or "$…" for w in args))  # not a key we read
        return
    letter, modifiers = operation.groups()
    if letter in "dmqrs":
        for word in rest[1:]:
            out.word(word, name)
    elif letter == "x":
        skip = 1 + sum(m in modifiers for m in "abiN")
        if len(rest) > skip:
            content(out, "ar", rest[skip].value, name, folder)


COMPRESSED = (".tgz", ".gz", ".bz2", ".xz", ".lzma", ".zst", ".lz4", ".br", ".lz", ".z", ".Z")
DECOMPRESSORS = frozenset(
    "gunzip unpigz bunzip2 unxz unlzma unzstd zstdmt unlz4 unbrotli lunzip uncompress".split()
)
_GZIP_NAMES = frozenset({"gzip", "gunzip", "pigz", "unpigz"})


def compressor(out: Writes, name: str, args: Sequence[Word]) -> None:
    """gzip, bzip2, xz, zstd, lz4, … replace each file: `gzip F` removes F, `gunzip F.gz`
    writes F, `gunzip -N F.gz` the name the gzip header stores, beside F.gz (`-c`/`--stdout`,
    `-t`, `-l` write no file)."""
    options = split_options(
        unabbreviated(args, "--name --decompress --uncompress --stdout --suffix"),
        "-o -S --suffix -b -T --threads",
    )
    flags = options.flags
    if flags & {"-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list"}:
        return
    target = options.value("-o")
    if target is not None:
        out.word(target, name)
    unpacks = name in DECOMPRESSORS or bool(flags & {"-d", "--decompress", "--uncompress"})
    stored = unpacks and name in _GZIP_NAMES and bool(flags & {"-N", "--name"})
    positionals = list(options.positionals)
    if name in ("lz4", "unlz4") and len(positionals) == 2:  # `lz4 -d IN OUT`
        out.word(positionals[1], name)
        positionals = positionals[:1]
    for word in positionals:
        out.word(word, name)
        if unpacks and word.value is not None and word.value.endswith(COMPRESSED):
            stem, suffix = os.path.splitext(word.value)
            out.word(Word(stem + (".tar" if suffix == ".tgz" else ""), word.glob), name)
        if stored:
            folder = Word(os.path.dirname(word.value or "") or ".")
            content(out, "gzip", word.value, f"{name} -N", folder, flat=True)


def zstdcat(out: Writes, name: str, args: Sequence[Word]) -> None:
    """`zstdcat -o F` writes F (zstd's `-o` wins over the `-c` the name implies)."""
    target = split_options(args, "-o").value("-o")
    if target is not None:
        out.word(target, name)


def python_module(out: Writes, name: str, args: Sequence[Word]) -> bool:
    """`python3 -m zipfile|tarfile|gzip …` (the standard library's command-line tools): the
    members an extraction writes, the archive a creation writes, the file `gzip -d` writes.
    False when `args` run another module or code (the caller treats the program as opaque)."""
    values = [w.value for w in args]
    if "-m" not in values:
        return False
    at = values.index("-m")
    if at + 1 >= len(args) or any(v is None or not v.startswith("-") for v in values[:at]):
        return False
    module, rest = values[at + 1], list(args[at + 2 :])
    program = f"{name} -m {module}"
    if module in ("zipfile", "tarfile"):
        _python_archive(out, program, "zip" if module == "zipfile" else "tar", rest)
    elif module == "gzip":
        options = split_options(unabbreviated(rest, "--decompress"))
        for word in options.positionals:
            if options.flags & {"-d", "--decompress"} and (word.value or "").endswith(".gz"):
                out.word(Word((word.value or "")[:-3], word.glob), program)
            else:
                out.word(Word(f"{word.value}.gz", word.glob), program)
    else:
        return False
    return True


def _python_archive(out: Writes, program: str, kind: ContentKind, rest: list[Word]) -> None:
    """`-e ARCHIVE [DIR]` extracts (into `.` without DIR), `-c ARCHIVE FILES…` creates."""
    args = unabbreviated(rest, "--extract --create --list --test")
    values = [w.value for w in args]
    for keys, creates in ((("-e", "--extract"), False), (("-c", "--create"), True)):
        at = next((i for i, v in enumerate(values) if v in keys), None)
        if at is None or at + 1 >= len(args):
            continue
        archive = args[at + 1]
        if creates:
            out.word(archive, program)
        else:
            folder = args[at + 2] if at + 2 < len(args) else None
            content(out, kind, archive.value, program, folder)


def content(
    out: Writes,
    kind: ContentKind,
    source: str | None,
    program: str,
    folder: Word | None,
    *,
    strip: int = 0,
    prefix: str = "",
    flat: bool = False,
) -> None:
    """A program that writes what `source` lists, below `folder` (`.` when none)."""
    if folder is not None and folder.value is None:
        out.unknown(program, folder)
        return
    where = folder.value if folder is not None and folder.value else "."
    out.content(Contents(kind, source, program, where, strip, prefix, flat))
