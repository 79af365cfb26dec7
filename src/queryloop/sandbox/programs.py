"""Which program a file is: `ProgramIndex` (the watched programs' files, by inode and by
content) and `open_executable` (the file a stopped exec names, opened as the process would
find it: through its root, its working folder or a descriptor it holds).

A deny rule names a program (`rm`), not a path: the same file under another name (a hard or
symbolic link, `hash -p`, an alias) has the same inode, and a copy (`cp /bin/rm ./zz`) has the
same bytes. Content is hashed only when the size matches a watched program's, so an exec of
anything else costs one `fstat`.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import glob
import hashlib
import os
import stat
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

STANDARD_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
"""Searched besides the command's PATH: a rule names the program wherever it lives."""
LOADER = "ld.so"
"""The name the dynamic loader's files are indexed under: run as a program
(`/lib64/ld-linux-x86-64.so.2 /bin/rm -rf x`) it maps the program it is given without
another exec, so that program is what is checked."""
LOADER_GLOBS = (
    "/lib64/ld-linux*.so*",
    "/lib/ld-linux*.so*",
    "/lib/*/ld-linux*.so*",
    "/usr/lib/*/ld-linux*.so*",
    "/usr/lib64/ld-linux*.so*",
    "/lib/ld-musl-*.so*",
)
_LOADER_VALUE_OPTIONS = frozenset(
    {
        "--library-path",
        "--inhibit-rpath",
        "--audit",
        "--preload",
        "--argv0",
        "--glibc-hwcaps-prefix",
        "--glibc-hwcaps-mask",
    }
)
MAX_LINKS = 40
"""Symbolic links followed in one path (the kernel's own limit)."""
SHEBANG_BYTES = 256


@dataclass(frozen=True, slots=True)
class FileId:
    """A file's identity: device and inode."""

    dev: int
    ino: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileId:
        return cls(st.st_dev, st.st_ino)


@dataclass
class ProgramIndex:
    """The files of the watched programs, found once on the PATHs given."""

    by_id: dict[FileId, set[str]] = field(default_factory=dict)
    by_digest: dict[tuple[int, str], set[str]] = field(default_factory=dict)
    _digests: dict[tuple[FileId, int, int, int], str] = field(default_factory=dict)

    @classmethod
    def build(cls, names: Iterable[str], search_path: str) -> ProgramIndex:
        """Index every file each of `names` resolves to on `search_path` and the standard
        folders (a name with a `/` is that file)."""
        index = cls()
        dirs = list(dict.fromkeys([*search_path.split(os.pathsep), *STANDARD_PATH]))
        for name in names:
            for candidate in _candidates(name, dirs):
                index._add(candidate, name)
        for pattern in LOADER_GLOBS:
            for candidate in glob.glob(pattern):
                index._add(candidate, LOADER)
        return index

    def _add(self, path: str, name: str) -> None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return
            self.by_id.setdefault(FileId.of(st), set()).add(name)
            self.by_digest.setdefault((st.st_size, self._digest(fd, st)), set()).add(name)
        finally:
            os.close(fd)

    def names_of(self, fd: int) -> set[str]:
        """The watched programs the open file `fd` is: the same inode, or a copy — the same
        bytes, with anything appended after them (a program still runs with data added at
        its end: `cp /bin/rm zz; echo >> zz`)."""
        st = os.fstat(fd)
        found = set(self.by_id.get(FileId.of(st), ()))
        for size in sorted({size for size, _ in self.by_digest if size <= st.st_size}):
            found |= self.by_digest.get((size, self._digest(fd, st, size)), set())
        return found

    def _digest(self, fd: int, st: os.stat_result, size: int | None = None) -> str:
        """SHA-256 of the first `size` bytes of the file (all of it by default), cached by
        the file's identity, size and time of change."""
        length = st.st_size if size is None else size
        key = (FileId.of(st), st.st_size, st.st_mtime_ns, length)
        known = self._digests.get(key)
        if known is None:
            digest = hashlib.sha256()
            offset = 0
            while offset < length and (
                chunk := os.pread(fd, min(1 << 20, length - offset), offset)
            ):
                digest.update(chunk)
                offset += len(chunk)
            known = self._digests[key] = digest.hexdigest()
        return known


def _candidates(name: str, dirs: list[str]) -> Iterator[str]:
    if "/" in name:
        yield name
        return
    for folder in dirs:
        if folder:
            yield os.path.join(folder, name)


@dataclass(frozen=True, slots=True)
class ProcessView:
    """Where a stopped process finds files: its root, its working folder, its descriptors."""

    pid: int

    @property
    def root(self) -> str:
        return f"/proc/{self.pid}/root"

    def proc_entry(self, procfs: int, *, thread: bool = False) -> str:
        """`self` (or `thread-self`) of the procfs `procfs` holds, for this process: its ids
        in our pid namespace when that procfs is ours, else those in its own namespace (the
        sandbox's /proc)."""
        status = dict(
            line.split(":", 1) for line in Path(f"/proc/{self.pid}/status").read_text().splitlines()
        )
        ours = (
            os.readlink("self", dir_fd=procfs) == str(os.getpid()) if _has_self(procfs) else False
        )
        if ours:
            tgid, tid = status["Tgid"].strip(), str(self.pid)
        else:
            tgid, tid = status["NStgid"].split()[-1], status["NSpid"].split()[-1]
        return f"{tgid}/task/{tid}" if thread else tgid

    def start(self, dirfd: int | None) -> str:
        """The folder a relative `path` starts from (the cwd, or the folder `dirfd` holds)."""
        if dirfd is None or dirfd == AT_FDCWD:
            return f"/proc/{self.pid}/cwd"
        return f"/proc/{self.pid}/fd/{dirfd}"


AT_FDCWD = -100


def _has_self(procfs: int) -> bool:
    try:
        os.readlink("self", dir_fd=procfs)
    except OSError:  # a procfs of a pid namespace we are not in has no `self` for us
        return False
    return True


@contextlib.contextmanager
def open_executable(view: ProcessView, path: str, dirfd: int | None = None) -> Iterator[int]:
    """The file `path` names for the stopped process, opened read-only; symbolic links are
    followed as the process would follow them (an absolute target from its own root). Raises
    OSError when it does not exist there: the kernel will then refuse the exec itself."""
    fd = _resolve(view, path, dirfd)
    try:
        yield fd
    finally:
        os.close(fd)


def _resolve(view: ProcessView, path: str, dirfd: int | None) -> int:
    """Walk `path` a component at a time from the process's root or working folder. A
    symbolic link is read and walked in turn (an absolute one from the process's root), so
    that it means what it means for the process; inside procfs, `self` and `thread-self`
    are the process's own entries (not ours) and links (`fd/3`, `cwd`) are followed by the
    kernel, which resolves them for the process they belong to."""
    if path == "" and dirfd is not None:  # execveat(fd, "", AT_EMPTY_PATH): the fd itself
        return os.open(view.start(dirfd), os.O_RDONLY | os.O_CLOEXEC)
    todo = [p for p in path.split("/") if p]
    base = view.root if path.startswith("/") else view.start(dirfd)
    current = os.open(base, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    links = 0
    try:
        while todo:
            part = todo.pop(0)
            in_proc = _is_procfs(current)
            if in_proc and part in ("self", "thread-self"):
                todo[:0] = view.proc_entry(current, thread=part == "thread-self").split("/")
                continue
            try:
                target = None if in_proc else os.readlink(part, dir_fd=current)
            except OSError:  # not a link (or missing: open() below says so)
                target = None
            if target is None:
                flags = os.O_PATH | os.O_CLOEXEC | (0 if in_proc else os.O_NOFOLLOW)
                nxt = os.open(part, flags, dir_fd=current)
                os.close(current)
                current = nxt
                continue
            links += 1
            if links > MAX_LINKS:
                raise OSError(40, "Too many levels of symbolic links", path)
            todo[:0] = [p for p in target.split("/") if p]
            if target.startswith("/"):
                os.close(current)
                current = os.open(view.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        return os.open(f"/proc/self/fd/{current}", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(current)


PROC_SUPER_MAGIC = 0x9FA0
_STATFS_SIZE = 256


def _is_procfs(fd: int) -> bool:
    """Whether the folder `fd` holds is on a procfs (its type, from fstatfs(2))."""
    buffer = ctypes.create_string_buffer(_STATFS_SIZE)
    if _libc().fstatfs(fd, buffer) != 0:
        return False
    return int.from_bytes(buffer.raw[: ctypes.sizeof(ctypes.c_long)], sys.byteorder) == (
        PROC_SUPER_MAGIC
    )


@cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def shebang(fd: int) -> list[str] | None:
    """A script's `#!` line as the kernel splits it (the interpreter and at most one
    argument), or None for a binary."""
    head = os.pread(fd, SHEBANG_BYTES, 0)
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].strip().decode("utf-8", "replace")
    if not line:
        return None
    interpreter, _, argument = line.partition(" ")
    argument = argument.strip()
    return [interpreter, argument] if argument else [interpreter]


def loaded_program(argv: Sequence[str]) -> list[str] | None:
    """The program and arguments the dynamic loader was asked to run (`argv[0]` is the
    loader), as it reads its options (ld.so(8)); None when it runs none (`--help`). The
    program's file comes first: `--argv0` changes only the name it is told it has."""
    words = list(argv[1:])
    while words and words[0].startswith("--"):
        name, eq, _ = words.pop(0).partition("=")
        if name in _LOADER_VALUE_OPTIONS and not eq and words:
            words.pop(0)
    return words or None


def parent_argv(pid: int) -> tuple[str, ...]:
    """The arguments of `pid`'s parent process (empty when it cannot be read)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        ppid = next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:"))
        raw = Path(f"/proc/{ppid}/cmdline").read_bytes()
    except (OSError, StopIteration, IndexError):
        return ()
    return tuple(a.decode("utf-8", "surrogateescape") for a in raw.split(b"\0")[:-1])


def search_path(env: Mapping[str, str]) -> str:
    """The PATH a command runs with."""
    return env.get("PATH") or os.defpath
