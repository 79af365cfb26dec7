"""The supervisor of one command: a thread that answers its seccomp notifications.

For an exec it reads the file name and the arguments from the stopped process, opens the
file as the process would, learns which programs it is (`programs.ProgramIndex`; a script's
interpreter too) and asks the `ExecPolicy`; a refusal fails the exec with EPERM and is
recorded for the model. For a `connect` (in the OS sandbox) it reads the address: a unix
socket with a path is refused unless `sandbox.network.allowUnixSockets` names it.

The launch's own programs (bwrap, the network bridge, the shell running the command) are
exec'd before the command runs: each is let through once, by its exact argument list.

Limits (docs/sandbox.md): the check sees programs, not what a program does by its own
system calls; and user notification is time-of-check/time-of-use: another thread of the
caller may change the name in memory after it was read (the kernel's documentation says so:
seccomp_unotify(2), "Design goals; use of SECCOMP_USER_NOTIF_FLAG_CONTINUE").
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import select
import shlex
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from .exec_policy import ExecCall, ExecPolicy
from .programs import (
    LOADER,
    ProcessView,
    ProgramIndex,
    loaded_program,
    open_executable,
    parent_argv,
    shebang,
)
from .seccomp import AF_UNIX, Listener, Memory, Notification, Watched, receive_listener

log = logging.getLogger(__name__)

AT_EMPTY_PATH = 0x1000
POLL_MS = 200
MAX_SOCKADDR = 128


@dataclass
class Refusals:
    """What the supervisor refused while the command ran, in order (said to the model)."""

    messages: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, message: str) -> None:
        with self._lock:
            if message not in self.messages:
                self.messages.append(message)

    def text(self) -> str:
        """The refusals as lines for the tool result ('' when there were none)."""
        with self._lock:
            return "\n".join(self.messages)


@dataclass(frozen=True, slots=True)
class SocketRule:
    """Which unix sockets a sandboxed command may connect to (absolute, resolved paths)."""

    allowed: tuple[str, ...] = ()


class Supervisor:
    """Answers one command's notifications on a thread until every process of the command
    has exited or `stop()` is called (then pending and later execs fail: fail closed)."""

    def __init__(
        self,
        listener_sock: socket.socket,
        numbers: dict[int, Watched],
        *,
        policy: ExecPolicy | None,
        index: ProgramIndex,
        launch_argvs: Sequence[Sequence[str]] = (),
        sockets: SocketRule | None = None,
    ) -> None:
        self.refusals = Refusals()
        self._sock = listener_sock
        self._numbers = numbers
        self._policy = policy
        self._index = index
        self._launch = [list(a) for a in launch_argvs]
        self._sockets = sockets
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="queryloop-exec-check", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """End supervision (the command finished or was killed)."""
        self._stop.set()
        self._thread.join(timeout)
        self._sock.close()

    def _run(self) -> None:
        try:
            fd = receive_listener(self._sock)
        except OSError as exc:  # the child failed before sending it: it did not run
            log.debug("no seccomp listener: %s", exc)
            return
        listener = Listener(fd, self._numbers)
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        try:
            while not self._stop.is_set():
                for _, mask in poller.poll(POLL_MS):
                    if mask & select.POLLIN:
                        self._serve(listener)
                    elif mask & (select.POLLHUP | select.POLLERR):
                        return  # every process of the command has exited
        finally:
            listener.close()

    def _serve(self, listener: Listener) -> None:
        note = listener.receive()
        if note is None:
            return
        try:
            error = self._decide(listener, note)
        except Exception as exc:  # a check that breaks refuses: never a silent allow
            log.warning("exec check failed: %r", exc)
            self.refusals.add(f"queryloop: a program was refused: the exec check failed ({exc})")
            error = errno.EPERM
        if error is None:
            listener.respond(note.id, continue_=True)
        else:
            listener.respond(note.id, error=error)

    def _decide(self, listener: Listener, note: Notification) -> int | None:
        """None to let the call run, else the errno it fails with."""
        if note.call is Watched.CONNECT:
            return self._connect(listener, note)
        with Memory(note.pid) as mem:
            if note.call is Watched.EXECVE:
                dirfd, path_at, argv_at, flags = None, note.args[0], note.args[1], 0
            else:
                dirfd, path_at, argv_at, flags = (
                    _signed(note.args[0]),
                    note.args[1],
                    note.args[2],
                    note.args[4],
                )
            path = _text(mem.string(path_at))
            raw_argv, truncated = mem.string_array(argv_at)
        if not listener.valid(note.id):
            return None  # the caller is gone: nothing runs
        argv = [_text(a) for a in raw_argv]
        if self._launch and argv == self._launch[0]:
            self._launch.pop(0)
            return None
        if self._policy is None:
            return None
        view = ProcessView(note.pid)
        if path == "" and not flags & AT_EMPTY_PATH:
            return None
        try:
            with open_executable(view, path, dirfd) as fd:
                names = self._names(fd, path, argv)
                interpreter = shebang(fd)
        except OSError:
            return None  # the kernel cannot find it either; it answers the exec itself
        parent = functools.partial(parent_argv, note.pid)
        call = ExecCall(path, tuple(sorted(names)), tuple(argv), parent, truncated)
        message = self._policy.refusal(call)
        if message is None and interpreter is not None:  # a script runs its interpreter
            message = self._run_by(view, [*interpreter, path, *argv[1:]], call)
        if message is None and LOADER in names:  # the loader runs the program it is given
            loaded = loaded_program(argv)
            message = None if loaded is None else self._run_by(view, loaded, call)
        if message is None:
            return None
        self.refusals.add(f"queryloop: {shlex.join(argv)[:200]} was not run: {message}")
        return errno.EPERM

    def _names(self, fd: int, path: str, argv: list[str]) -> set[str]:
        names = self._index.names_of(fd)
        names.add(os.path.basename(path))
        if argv:
            names.add(os.path.basename(argv[0]))
        names.discard("")
        return names

    def _run_by(self, view: ProcessView, argv: list[str], call: ExecCall) -> str | None:
        """Check the program a script's interpreter or the loader runs without another
        exec: `argv[0]` is its file (relative to the process's folder), `argv` what it gets."""
        assert self._policy is not None
        try:
            with open_executable(view, argv[0]) as fd:
                names = self._names(fd, argv[0], argv[:1])
                interpreter = shebang(fd)
        except OSError:
            return None  # it will not find it either
        inner = ExecCall(argv[0], tuple(sorted(names)), tuple(argv), call.parent)
        message = self._policy.refusal(inner)
        if message is None and interpreter is not None and argv[0] != call.path:
            message = self._run_by(view, [*interpreter, *argv], call)
        return message

    def _connect(self, listener: Listener, note: Notification) -> int | None:
        if self._sockets is None:
            return None
        size = min(note.args[2], MAX_SOCKADDR)
        with Memory(note.pid) as mem:
            raw = mem.read(note.args[1], size)
        if not listener.valid(note.id):
            return None
        if len(raw) < 3 or int.from_bytes(raw[:2], "little") != AF_UNIX or raw[2] == 0:
            return None  # not a unix socket, or an abstract one (the sandbox's own netns)
        name = _text(raw[2:].split(b"\0", 1)[0])
        target = name if name.startswith("/") else os.path.join(f"/proc/{note.pid}/cwd", name)
        real = os.path.realpath(target)
        if name in self._sockets.allowed or real in self._sockets.allowed:
            return None
        self.refusals.add(
            f"queryloop sandbox: the connection to the unix socket {name} was refused: a "
            "sandboxed command reaches only the sockets sandbox.network.allowUnixSockets names"
        )
        return errno.EPERM


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogateescape")


def _signed(value: int) -> int:
    """A 32-bit int argument (a file descriptor) as the kernel reads it."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value
