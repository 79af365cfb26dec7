"""The kernel side of the exec check: a seccomp filter whose listener we supervise.

A Bash command is started with a seccomp filter (installed in the forked child, just before
it executes the shell or bwrap) that turns `execve`/`execveat` — and, in the OS sandbox,
`connect` — into *user notifications* (seccomp_unotify(2)): the calling thread stops until
queryloop answers "continue" or an error. The filter is built by libseccomp through its
Python bindings (`pyseccomp`, the ctypes binding API-compatible with libseccomp's own), which
knows each architecture's syscall numbers and makes a syscall of a foreign ABI (32-bit
`int 0x80`, x32) kill the process instead of slipping past. The child loads the filter with
one `seccomp()` call and hands the listener's file descriptor to the parent over a socket
pair (SCM_RIGHTS); the parent reads and answers notifications with the three ioctls of
`<linux/seccomp.h>` (`Listener`).

Nothing here decides anything: `sandbox.supervisor` does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import os
import socket
import struct
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any

PR_SET_NO_NEW_PRIVS = 38
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
SECCOMP_USER_NOTIF_FLAG_CONTINUE = 1
AF_UNIX = 1
SOCK_TYPE_MASK = 0xF
SOCK_DGRAM = 2

_NOTIF = struct.Struct("=QIIiIQ6Q")
"""struct seccomp_notif: id, pid, flags, then seccomp_data (nr, arch, ip, args[6])."""
_RESP = struct.Struct("=QqiI")
"""struct seccomp_notif_resp: id, val, error, flags."""


def _iowr(nr: int, size: int, direction: int = 3) -> int:
    return (direction << 30) | (size << 16) | (ord("!") << 8) | nr


NOTIF_RECV = _iowr(0, _NOTIF.size)
NOTIF_SEND = _iowr(1, _RESP.size)
NOTIF_ID_VALID = _iowr(2, 8, direction=1)


class Watched(Enum):
    """The system calls a notification can be about."""

    EXECVE = "execve"
    EXECVEAT = "execveat"
    CONNECT = "connect"


@dataclass(frozen=True, slots=True)
class Notification:
    """One stopped system call: who (`pid`, in our pid namespace), which, its raw arguments."""

    id: int
    pid: int
    call: Watched
    args: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """What the filter watches: execs always; with `sockets`, `connect` (checked by path)
    and no datagram unix sockets (a datagram can be sent to a path without `connect`), no
    io_uring (its operations are invisible to seccomp)."""

    sockets: bool = False


class SeccompUnavailableError(Exception):
    """Why exec checks cannot run here (no libseccomp, an old kernel, not Linux)."""


@cache
def _library() -> Any:
    """pyseccomp, imported once (it loads libseccomp when imported)."""
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError) as exc:  # RuntimeError: no libseccomp
        raise SeccompUnavailableError(f"libseccomp's Python bindings are missing ({exc})") from exc
    return pyseccomp


@cache
def _libc() -> Any:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@dataclass(frozen=True, slots=True)
class CompiledFilter:
    """A filter ready to load: the BPF program, and the native numbers of the calls it
    notifies about (a notification carries only the number)."""

    program: bytes
    numbers: dict[int, Watched]
    seccomp_nr: int


@cache
def compile_filter(spec: FilterSpec) -> CompiledFilter:
    """The BPF program for `spec` (built by libseccomp once per spec)."""
    lib = _library()
    arch = lib.Arch.NATIVE
    watched = [Watched.EXECVE, Watched.EXECVEAT] + ([Watched.CONNECT] if spec.sockets else [])
    flt = lib.SyscallFilter(lib.ALLOW)
    for call in watched:
        flt.add_rule(lib.NOTIFY, call.value)
    if spec.sockets:
        eperm = lib.ERRNO(errno.EPERM)
        flt.add_rule(
            eperm,
            "socket",
            lib.Arg(0, lib.EQ, AF_UNIX),
            lib.Arg(1, lib.MASKED_EQ, SOCK_TYPE_MASK, SOCK_DGRAM),
        )
        flt.add_rule(eperm, "socketpair", lib.Arg(1, lib.MASKED_EQ, SOCK_TYPE_MASK, SOCK_DGRAM))
        flt.add_rule(eperm, "io_uring_setup")
    with tempfile.TemporaryFile() as out:
        flt.export_bpf(out)
        out.seek(0)
        program = out.read()
    numbers = {lib.resolve_syscall(arch, c.value): c for c in watched}
    return CompiledFilter(program, numbers, lib.resolve_syscall(arch, "seccomp"))


def child_installer(compiled: CompiledFilter, sock: socket.socket) -> Callable[[], None]:
    """The `preexec_fn` that loads `compiled` in the forked child and sends the listener to
    the parent over `sock`. Everything is prepared here, so the child only makes system calls."""
    return _Installer(compiled, sock)


class _Installer:
    def __init__(self, compiled: CompiledFilter, sock: socket.socket) -> None:
        self._libc = _libc()
        self._nr = compiled.seccomp_nr
        self._buffer = ctypes.create_string_buffer(compiled.program, len(compiled.program))
        address = ctypes.cast(self._buffer, ctypes.c_void_p).value
        self._prog = _SockFprog(len(compiled.program) // 8, address)
        self._sock = sock

    def __call__(self) -> None:
        libc = self._libc
        # no_new_privs: required to load a filter without CAP_SYS_ADMIN; it also keeps a
        # setuid program from gaining privileges the filter's owner does not have.
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        fd = libc.syscall(
            self._nr,
            SECCOMP_SET_MODE_FILTER,
            SECCOMP_FILTER_FLAG_NEW_LISTENER,
            ctypes.byref(self._prog),
        )
        if fd < 0:
            raise OSError(ctypes.get_errno(), "seccomp(SECCOMP_SET_MODE_FILTER)")
        socket.send_fds(self._sock, [b"L"], [fd])
        os.close(fd)


def receive_listener(sock: socket.socket) -> int:
    """The listener's file descriptor the child sent over `sock`."""
    _, fds, _, _ = socket.recv_fds(sock, 1, 1)
    if not fds:
        raise OSError(errno.EBADMSG, "the child sent no seccomp listener")
    return fds[0]


class Listener:
    """The parent's end of one filter: receive a notification, answer it."""

    def __init__(self, fd: int, numbers: dict[int, Watched]) -> None:
        self.fd = fd
        self._numbers = numbers

    def receive(self) -> Notification | None:
        """The next notification (call when the fd is readable); None when its caller is
        already gone (the kernel dropped it)."""
        buf = bytearray(_NOTIF.size)
        try:
            fcntl.ioctl(self.fd, NOTIF_RECV, buf)
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.EINTR):
                return None
            raise
        nid, pid, _flags, nr, _arch, _ip, *args = _NOTIF.unpack(buf)
        call = self._numbers.get(nr)
        if call is None:  # not one we asked for: let it run
            self.respond(nid, continue_=True)
            return None
        return Notification(nid, pid, call, tuple(args))

    def valid(self, nid: int) -> bool:
        """Whether notification `nid`'s caller is still waiting: checked after reading its
        memory, so a pid reused by another process is never read in its place."""
        try:
            fcntl.ioctl(self.fd, NOTIF_ID_VALID, struct.pack("=Q", nid))
        except OSError:
            return False
        return True

    def respond(self, nid: int, *, continue_: bool = False, error: int = 0) -> None:
        """Let the call run (`continue_`) or fail it with `error` (a positive errno)."""
        flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE if continue_ else 0
        try:
            fcntl.ioctl(self.fd, NOTIF_SEND, _RESP.pack(nid, 0, -error if error else 0, flags))
        except OSError as exc:
            if exc.errno != errno.ENOENT:  # the caller died meanwhile: nothing to answer
                raise

    def close(self) -> None:
        """Close the listener: calls that would notify now fail with ENOSYS (fail closed)."""
        os.close(self.fd)


class Memory:
    """A stopped process's memory, read through /proc/PID/mem."""

    PAGE = 4096

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self._fd)

    def read(self, address: int, size: int) -> bytes:
        return os.pread(self._fd, size, address)

    def string(self, address: int, limit: int = 65536) -> bytes:
        """The NUL-terminated string at `address` (at most `limit` bytes)."""
        out = bytearray()
        while len(out) < limit:
            # Read to the end of the page only: the next page may not be mapped.
            chunk = self.read(address, self.PAGE - (address % self.PAGE))
            if not chunk:
                break
            end = chunk.find(b"\0")
            if end >= 0:
                out += chunk[:end]
                return bytes(out)
            out += chunk
            address += len(chunk)
        return bytes(out[:limit])

    def string_array(self, address: int, max_items: int = 4096) -> tuple[list[bytes], bool]:
        """The NULL-terminated array of strings at `address` (an argv); True with it when
        it was cut at `max_items`."""
        items: list[bytes] = []
        while address and len(items) < max_items:
            # The pointers up to the end of the page, in one read.
            block = self.read(address, self.PAGE - (address % self.PAGE))
            if len(block) < 8:
                break
            for (pointer,) in struct.iter_unpack("=Q", block[: len(block) // 8 * 8]):
                if pointer == 0:
                    return items, False
                items.append(self.string(pointer))
                if len(items) >= max_items:
                    return items, True
            address += len(block) // 8 * 8
        return items, bool(address)
