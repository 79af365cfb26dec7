"""The bridge inside the sandbox: 127.0.0.1:PROXY_PORT of the sandbox's own network
namespace, forwarded to the proxy's unix socket (bound in from outside).

It is the first program bwrap starts: it starts a server on the port whose standard
streams are /dev/null (so it never holds the command's output pipes open), and then becomes
the command itself (`exec`), so the command is still the process bwrap waits for. The server
dies with the sandbox's pid namespace when the command ends.

Two servers, the same behaviour:

- **socat** (Debian package `socat`), when it is installed: `/bin/sh` starts
  `socat TCP-LISTEN:…,fork UNIX-CONNECT:…` in the background, waits until the port is
  listening (socat's log says so; the shell looks with builtins only: no process per look),
  and execs the command. Anthropic's sandbox-runtime bridges its sandbox the same way
  (anthropic-experimental/sandbox-runtime, `src/sandbox/linux-sandbox-utils.ts`). A shell
  and a C program start in a few milliseconds; an interpreter takes about 20 ms inside bwrap
  (docs/benchmarks.md).
- **Python** otherwise: our interpreter (`sys.executable`, without `site`) importing only C
  modules and `os`, which binds the port, forks the server and execs the command; each
  connection is served by two forked processes, one per direction.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

PROXY_PORT = 3128
"""The bridge's port inside the sandbox (its own network namespace: no clash possible)."""

BridgeKind = Literal["socat", "python"]

SOCAT_LOG = "/dev/shm/queryloop-bridge.log"
"""socat's log inside the sandbox (bwrap's `--dev` makes a private `/dev/shm`)."""

SOCAT_SCRIPT = f"""\
s=$1; shift
"$s" -d -d TCP-LISTEN:{PROXY_PORT},bind=127.0.0.1,fork,reuseaddr "UNIX-CONNECT:$1" \\
  </dev/null >/dev/null 2>{SOCAT_LOG} &
p=$!; shift
until [ -s {SOCAT_LOG} ]; do kill -0 "$p" 2>/dev/null || break; done
exec "$@"
"""
"""`sh -c SCRIPT sh SOCAT SOCKET COMMAND…`: socat listening, then the command. With `-d -d`
socat's first log line is `listening on …`, written right after `listen()`: the shell waits
for the log to be non-empty (one `stat` per look, a shell builtin; reading `/proc/net/tcp`
instead costs a system call per byte in dash, and was 25 ms slower per command). If socat
exits first, the command runs anyway (it then finds no proxy, as without one). The log holds
a few lines per connection in the sandbox's memory until the command ends."""

PYTHON_SOURCE = """\
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

_SOCAT_SAFE = re.compile(r"^[A-Za-z0-9_./+-]+$")
"""Characters a path may hold inside a socat address (`:` and `,` separate its parts)."""


def find_socat() -> str | None:
    """socat's path when it is installed."""
    return shutil.which("socat")


def bridge_argv(
    socket_path: Path,
    inner: Sequence[str],
    *,
    socat: str | None = None,
    python: str | None = None,
) -> list[str]:
    """`inner`, started behind the bridge to the proxy at `socket_path`: socat's when
    `socat` is given (and the path fits in a socat address), else the Python one."""
    if socat is not None and _SOCAT_SAFE.match(str(socket_path)):
        return ["/bin/sh", "-c", SOCAT_SCRIPT, "sh", socat, str(socket_path), *inner]
    # The real interpreter, not a venv's link to it: a venv under /tmp is out of sight in the
    # sandbox (its /tmp is private), and the bridge needs nothing but the standard library.
    interpreter = python or os.path.realpath(sys.executable)
    return [interpreter, "-S", "-c", PYTHON_SOURCE, str(socket_path), str(PROXY_PORT), *inner]


def bridge_execs(
    bridged: Sequence[str], socket_path: Path, *, socat: str | None = None
) -> list[tuple[str, ...]]:
    """The programs `bridge_argv` executes before the command, each's argv in order: the
    bridge itself and, for socat's, socat (the exec check lets each through once)."""
    execs = [tuple(bridged)]
    if bridged[:3] == ["/bin/sh", "-c", SOCAT_SCRIPT] and socat is not None:
        listen = f"TCP-LISTEN:{PROXY_PORT},bind=127.0.0.1,fork,reuseaddr"
        execs.append((socat, "-d", "-d", listen, f"UNIX-CONNECT:{socket_path}"))
    return execs


def proxy_env() -> dict[str, str]:
    """The variables that send the command's HTTP(S) traffic to the bridge."""
    url = f"http://127.0.0.1:{PROXY_PORT}"
    names = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
    return dict.fromkeys(names, url)
