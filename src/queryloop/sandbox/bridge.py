"""The bridge inside the sandbox: 127.0.0.1:PROXY_PORT of the sandbox's own network
namespace, forwarded to the proxy's unix socket (bound in from outside).

It is the first program bwrap starts: it binds the port, forks a child that serves (its
standard streams on /dev/null, so it never holds the command's output pipes open), and
then becomes the command itself (`exec`), so the command is still the process bwrap
waits for. The child dies with the sandbox's pid namespace when the command ends. The
interpreter is ours (`sys.executable`, without `site`); it imports only C modules and `os`
(`socket` and `threading` would pull in most of the standard library's start-up cost), and
serves each connection with two forked processes, one per direction.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

PROXY_PORT = 3128
"""The bridge's port inside the sandbox (its own network namespace: no clash possible)."""

SOURCE = """\
import os, sys, _signal, _socket as S
sock, port, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
server = S.socket(S.AF_INET, S.SOCK_STREAM)
server.setsockopt(S.SOL_SOCKET, S.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(128)
if os.fork() == 0:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _signal.signal(_signal.SIGCHLD, _signal.SIG_IGN)
    def pipe(a, b):
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        try:
            b.shutdown(S.SHUT_WR)
        except OSError:
            pass
        os._exit(0)
    while True:
        fd, _ = server._accept()
        if os.fork() == 0:
            server.close()
            client = S.socket(S.AF_INET, S.SOCK_STREAM, 0, fd)
            upstream = S.socket(S.AF_UNIX, S.SOCK_STREAM)
            try:
                upstream.connect(sock)
            except OSError:
                os._exit(1)
            if os.fork() == 0:
                pipe(client, upstream)
            pipe(upstream, client)
        os.close(fd)
server.close()
os.execvp(argv[0], argv)
"""


def bridge_argv(socket_path: Path, inner: Sequence[str], python: str | None = None) -> list[str]:
    """`inner`, started behind the bridge to the proxy at `socket_path`."""
    # The real interpreter, not a venv's link to it: a venv under /tmp is out of sight in the
    # sandbox (its /tmp is private), and the bridge needs nothing but the standard library.
    interpreter = python or os.path.realpath(sys.executable)
    return [interpreter, "-S", "-c", SOURCE, str(socket_path), str(PROXY_PORT), *inner]


def proxy_env() -> dict[str, str]:
    """The variables that send the command's HTTP(S) traffic to the bridge."""
    url = f"http://127.0.0.1:{PROXY_PORT}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
    return dict.fromkeys(names, url)
