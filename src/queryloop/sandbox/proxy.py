"""The sandbox's network: an HTTP proxy in our own process that admits only the allowed
hosts (`sandbox.network.allowedDomains`).

It listens on a unix socket in a private folder (mode 0700) that is bound into the
sandbox; the command inside has no network of its own and reaches the socket through the
bridge (`sandbox.bridge`) on 127.0.0.1 of the sandbox's network namespace, which the
`HTTP_PROXY`/`HTTPS_PROXY` variables name. Two request forms are served, as any forward
proxy does: `CONNECT host:port` (HTTPS and other TLS: a tunnel, the proxy never sees the
content) and plain HTTP with an absolute URI (`GET http://host/path`), forwarded with
`Connection: close` so one connection cannot be reused for a second host. A refused host
gets a 403 whose text says which setting admits it.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from .domains import DomainFilter

HEAD_LIMIT = 64 * 1024
CONNECT_TIMEOUT_S = 10.0
HOP_HEADERS = frozenset({b"connection", b"proxy-connection", b"proxy-authorization", b"keep-alive"})


class ProxyRefusal(Exception):
    """A request the proxy answers itself (status and text) instead of forwarding."""

    def __init__(self, status: int, reason: str, text: str) -> None:
        super().__init__(text)
        self.status = status
        self.reason = reason
        self.text = text

    def response(self) -> bytes:
        """The whole HTTP response."""
        body = (self.text + "\n").encode("utf-8")
        head = (
            f"HTTP/1.1 {self.status} {self.reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        return head.encode("latin-1") + body


def refusal_text(host: str, port: int, denied: bool) -> str:
    """What a refused command reads: which host, which setting would admit it."""
    if denied:
        return (
            f"queryloop sandbox: {host}:{port} is refused by sandbox.network.deniedDomains "
            "(it wins over allowedDomains)."
        )
    return (
        f"queryloop sandbox: {host}:{port} is not in sandbox.network.allowedDomains; the "
        f'sandbox reaches only the hosts listed there. To allow it, add "{host}" to '
        "sandbox.network.allowedDomains in your settings (see docs/sandbox.md)."
    )


class DomainProxy:
    """One session's proxy (started on first use, closed with the session)."""

    def __init__(self, domains: DomainFilter) -> None:
        self.domains = domains
        self._folder: Path | None = None
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    @property
    def folder(self) -> Path:
        """The private folder (mode 0700) that holds the socket; bound into the sandbox."""
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="queryloop-proxy-"))
        return self._folder

    @property
    def socket_path(self) -> Path:
        """The unix socket the proxy listens on."""
        return self.folder / "proxy.sock"

    async def start(self) -> None:
        """Listen on the socket (a no-op when already listening)."""
        if self._server is None:
            self._server = await asyncio.start_unix_server(
                self._serve, path=str(self.socket_path), limit=HEAD_LIMIT
            )

    async def aclose(self) -> None:
        """Stop listening, drop open tunnels and remove the folder."""
        if self._server is not None:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)
            self._server = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            await self._handle(reader, writer)
        except ProxyRefusal as refusal:
            with contextlib.suppress(OSError):
                writer.write(refusal.response())
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            writer.close()
            if task is not None:
                self._connections.discard(task)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        line, _, headers = head.partition(b"\r\n")
        method, target, version = _request_line(line)
        tunnel = method == "CONNECT"
        host, port, path = _connect_target(target) if tunnel else _http_target(target)
        if not self.domains.admits(host, port):
            text = refusal_text(host, port, self.domains.denies(host, port))
            raise ProxyRefusal(403, "Forbidden", text)
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(host, port), CONNECT_TIMEOUT_S
            )
        except (OSError, TimeoutError) as exc:
            raise ProxyRefusal(
                502, "Bad Gateway", f"queryloop sandbox: {host}:{port}: {exc}"
            ) from exc
        try:
            if tunnel:
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                up_writer.write(_forwarded_head(method, path, version, headers))
            await _relay(reader, writer, up_reader, up_writer)
        finally:
            up_writer.close()


def _request_line(line: bytes) -> tuple[str, str, str]:
    parts = line.decode("latin-1").split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise ProxyRefusal(400, "Bad Request", "queryloop sandbox: not an HTTP proxy request")
    return parts[0].upper(), parts[1], parts[2]


def _connect_target(target: str) -> tuple[str, int, str]:
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        raise ProxyRefusal(400, "Bad Request", f"queryloop sandbox: bad CONNECT target {target!r}")
    return host.strip("[]"), int(port), ""


def _http_target(target: str) -> tuple[str, int, str]:
    parts = urlsplit(target)
    if parts.scheme != "http" or not parts.hostname:
        raise ProxyRefusal(
            400,
            "Bad Request",
            "queryloop sandbox: the proxy forwards absolute http:// URIs and CONNECT only",
        )
    path = parts.path or "/"
    return parts.hostname, parts.port or 80, f"{path}?{parts.query}" if parts.query else path


def _forwarded_head(method: str, path: str, version: str, headers: bytes) -> bytes:
    kept = [
        h
        for h in headers.split(b"\r\n")
        if h and h.split(b":", 1)[0].strip().lower() not in HOP_HEADERS
    ]
    lines = [f"{method} {path} {version}".encode("latin-1"), *kept, b"Connection: close"]
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def _relay(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
) -> None:
    """Copy both ways until both sides have finished sending."""
    await asyncio.gather(_copy(reader, up_writer), _copy(up_reader, writer))


async def _copy(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    try:
        while chunk := await source.read(65536):
            sink.write(chunk)
            await sink.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            if sink.can_write_eof():
                sink.write_eof()
