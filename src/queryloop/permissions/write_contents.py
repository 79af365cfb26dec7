"""The paths a file lists, for programs that write what a file says (`write_model.Contents`).

An archive's members (`tarfile`, `zipfile`: the standard library reads every format `tar`
and `unzip` extract, compressed ones included), a patch's files (its `diff --git`, `---`,
`+++`, `rename to` and `copy to` lines, as git-apply(1) and patch(1) read them) and an xargs
list's words. A file that cannot be read, is larger than `MAX_BYTES` or is not of the kind
gives None: the caller then treats what it writes as unknown.
"""

from __future__ import annotations

import os
import re
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
    with zipfile.ZipFile(file) as archive:
        names = archive.namelist()
    return names if len(names) <= MAX_NAMES else None


def _patch(text: str) -> list[str] | None:
    """The paths of a unified or git diff; None when `text` is not a patch."""
    found: list[str] = []
    for line in text.splitlines():
        match = _PATCH_LINE.match(line)
        if match is None:
            continue
        found += [p for p in match.groups() if p and p != "/dev/null"]
    return [p.strip('"') for p in found] or None
