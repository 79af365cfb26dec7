"""The paths a file lists, for programs that write what a file says (`write_model.Contents`).

An archive's members (`tarfile`, `zipfile`: the standard library reads every format `tar`
and `unzip` extract, compressed ones included; a zip member's name with `\\` separators as
unzip restores it too, and where a link member points), the members of an `ar` archive (its
60-byte headers, GNU and BSD long names, read here: ar(5)), the name a gzip header stores
(RFC 1952 `FNAME`, which `gunzip -N` restores), a patch's files (its `diff --git`, `---`,
`+++`, `rename to` and `copy to` lines, as git-apply(1) and patch(1) read them) and an xargs
list's words. A file that cannot be read, is larger than `MAX_BYTES` or is not of the kind
gives None: the caller then treats what it writes as unknown.
"""

from __future__ import annotations

import os
import re
import stat
import tarfile
import zipfile

from .write_model import ContentKind

MAX_BYTES = 64 * 1024 * 1024
"""Larger files are not read (an archive is listed in full, which costs its whole size)."""
MAX_TEXT_BYTES = 4 * 1024 * 1024
MAX_NAMES = 100_000

_PATCH_LINE = re.compile(
    r"^(?:diff --git (\S+) (\S+)|(?:---|\+\+\+) (.+?)(?:\t.*)?|(?:rename|copy) to (.+))$"
)


def listed_paths(kind: ContentKind, file: str) -> list[str] | None:
    """The paths `file` lists as `kind`, or None when it cannot be read as one."""
    try:
        size = os.path.getsize(file)
        if not os.path.isfile(file) or size > MAX_BYTES:
            return None
        if kind == "tar":
            return _tar(file)
        if kind == "zip":
            return _zip(file)
        if kind == "ar":
            return _ar(file)
        if kind == "gzip":
            return _gzip_name(file)
        if size > MAX_TEXT_BYTES:
            return None
        with open(file, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError, ValueError):
        return None
    return _patch(text) if kind == "patch" else text.split()[:MAX_NAMES]


def _tar(file: str) -> list[str] | None:
    names: list[str] = []
    with tarfile.open(file) as archive:
        for member in archive:
            names.append(member.name)
            if member.issym():  # a link member lets a later member write through it
                names.append(os.path.join(os.path.dirname(member.name), member.linkname))
            elif member.islnk():
                names.append(member.linkname)
            if len(names) > MAX_NAMES:
                return None
    return names


def _zip(file: str) -> list[str] | None:
    names: list[str] = []
    with zipfile.ZipFile(file) as archive:
        for info in archive.infolist()[: MAX_NAMES + 1]:
            names.append(info.filename)
            if "\\" in info.filename:  # unzip takes `\` as a separator (MS-DOS archives)
                names.append(info.filename.replace("\\", "/"))
            if stat.S_ISLNK(info.external_attr >> 16) and info.file_size <= _MAX_LINK:
                target = archive.read(info).decode("utf-8", "replace")
                names.append(os.path.join(os.path.dirname(info.filename), target))
    return names if len(names) <= MAX_NAMES else None


_MAX_LINK = 4096
_AR_MAGIC = b"!<arch>\n"
_AR_HEADER = 60


def _ar(file: str) -> list[str] | None:
    """The member names of a GNU or BSD `ar` archive (None: not one, or a thin archive whose
    members live elsewhere)."""
    names: list[str] = []
    with open(file, "rb") as handle:
        if handle.read(len(_AR_MAGIC)) != _AR_MAGIC:
            return None
        table = b""
        while header := handle.read(_AR_HEADER):
            if len(header) < _AR_HEADER or header[58:60] != b"`\n":
                return None
            raw, size = header[:16].rstrip(b" "), int(header[48:58].strip() or b"0")
            body = handle.read(size + size % 2)[:size]
            if raw == b"//":  # GNU: the long-name table
                table = body
                continue
            if raw in (b"/", b"/SYM64/", b"__.SYMDEF", b"__.SYMDEF SORTED"):
                continue
            names.append(_ar_name(raw, body, table))
            if len(names) > MAX_NAMES:
                return None
    return names


def _ar_name(raw: bytes, body: bytes, table: bytes) -> str:
    if raw.startswith(b"#1/"):  # BSD: the name starts the body
        name = body[: int(raw[3:] or b"0")].rstrip(b"\0")
    elif raw.startswith(b"/") and raw[1:].isdigit():  # GNU: an offset in the table
        start = int(raw[1:])
        name = table[start:].split(b"\n", 1)[0].rstrip(b"/")
    else:
        name = raw.rstrip(b"/")
    return name.decode("utf-8", "replace")


def _gzip_name(file: str) -> list[str] | None:
    """The file name a gzip header stores ([] when it stores none)."""
    with open(file, "rb") as handle:
        head = handle.read(10)
        if len(head) < 10 or head[:2] != b"\x1f\x8b":
            return None
        flags = head[3]
        if flags & 0x04:  # FEXTRA
            size = int.from_bytes(handle.read(2), "little")
            handle.read(size)
        if not flags & 0x08:  # FNAME
            return []
        name = bytearray()
        while (byte := handle.read(1)) not in (b"", b"\0") and len(name) < _MAX_LINK:
            name += byte
    return [name.decode("latin-1")]


def _patch(text: str) -> list[str] | None:
    """The paths of a unified or git diff; None when `text` is not a patch."""
    found: list[str] = []
    for line in text.splitlines():
        match = _PATCH_LINE.match(line)
        if match is None:
            continue
        found += [p for p in match.groups() if p and p != "/dev/null"]
    return [p.strip('"') for p in found] or None
