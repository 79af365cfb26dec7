"""OAuth for remote MCP servers, through the `mcp` package's `OAuthClientProvider`.

The SDK runs the MCP authorization spec: on a 401 it discovers the protected-resource
metadata (RFC 9728) and the authorization server's (RFC 8414), registers a client (RFC 7591),
sends a person to the authorization URL with PKCE, exchanges the code and refreshes expired
tokens. This module gives it what is queryloop's to decide:

- where tokens live: one file per server in `$QUERYLOOP_HOME/mcp-auth/` (`FileTokenStorage`),
  written atomically with mode 0600; a file others can read is refused (fail closed: it holds
  secrets), a broken one is an error that names the file and the fix; neither stops other
  servers;
- when a person is asked: only by `queryloop mcp login NAME` or `/mcp login NAME` in the REPL
  (`Interactive`: the URL is shown, a loopback listener takes the redirect). At session start
  there is no one to ask, so a server that wants a login fails with a message naming both;
- that a stored token's expiry survives a restart, so an expired token is refreshed before the
  request instead of being sent and refused (the SDK keeps expiry in memory only).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import socket
import stat
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl, BaseModel, ValidationError

from .mcp_server import McpServerConfig

CALLBACK_PATH = "/callback"
CALLBACK_TIMEOUT = 300.0
"""Seconds `queryloop mcp login` waits for the browser to come back."""


def login_command(name: str) -> str:
    """The command that logs in to server `name`."""
    return f"queryloop mcp login {name}"


def repl_login_command(name: str) -> str:
    """The REPL's command that logs in to server `name` inside the session."""
    return f"/mcp login {name}"


class McpAuthError(Exception):
    """A token file that cannot be used (broken, or readable by others); says which and why."""


class McpLoginRequired(Exception):
    """The server wants a login and there is no one to ask (session start)."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"needs login: run `{login_command(name)}` (in the REPL: `{repl_login_command(name)}`)"
        )


def token_file(config: McpServerConfig) -> Path | None:
    """Where `config`'s tokens live: the name, and a hash of the URL so that tokens are never
    sent to another server that took over the name."""
    if config.auth_dir is None:
        return None
    digest = hashlib.sha256(config.url.encode()).hexdigest()[:12]
    return config.auth_dir / f"{config.name}-{digest}.json"


class StoredAuth(BaseModel):
    """A token file's content."""

    server: str
    url: str
    tokens: OAuthToken | None = None
    expires_at: float | None = None
    """When the access token expires (epoch seconds); `tokens.expires_in` was relative."""
    client: OAuthClientInformationFull | None = None


class FileTokenStorage:
    """The SDK's `TokenStorage` on one private JSON file.

    The client registration is written together with the tokens it obtained (never alone), so
    a login that fails half-way leaves the previous file as it was. `fresh`: ignore the file
    (a new login registers anew, since its loopback port may differ from the last one)."""

    def __init__(self, path: Path, config: McpServerConfig, *, fresh: bool = False) -> None:
        self.path = path
        self.name = config.name
        empty = StoredAuth(server=config.name, url=config.url)
        self.stored = empty if fresh else (self.load() or empty)

    def load(self) -> StoredAuth | None:
        """The file's content (None when there is no file); raises McpAuthError."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise McpAuthError(f"{self.path}: cannot read the token file: {exc}") from exc
        with os.fdopen(fd, "rb") as f:
            mode = stat.S_IMODE(os.fstat(f.fileno()).st_mode)
            if mode & 0o077:
                raise McpAuthError(
                    f"{self.path}: the token file has mode {mode:04o} (others may read it), "
                    f"so it was not used: `chmod 600 {self.path}` if only you could read it, "
                    f"else `{login_command(self.name)}` again"
                )
            raw = f.read()
        try:
            return StoredAuth.model_validate_json(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "file"
            raise McpAuthError(
                f"{self.path}: the token file is broken ({where}: {first['msg']}); it was "
                f"left as it is: `{login_command(self.name)}` replaces it"
            ) from exc

    def save(self) -> None:
        """Write the file atomically (a temporary file in the same folder, then rename), mode
        0600 from the start, its folder 0700."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:  # mkstemp makes it 0600
                f.write(self.stored.model_dump_json(indent=2, exclude_none=True))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    async def get_tokens(self) -> OAuthToken | None:
        """The stored tokens, `expires_in` counted from now (negative once expired)."""
        tokens, expires_at = self.stored.tokens, self.stored.expires_at
        if tokens is None or expires_at is None:
            return tokens
        return tokens.model_copy(update={"expires_in": int(expires_at - time.time())})

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Store new tokens (a login's or a refresh's) with the client that got them."""
        expires = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        self.stored = self.stored.model_copy(update={"tokens": tokens, "expires_at": expires})
        self.save()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The registered client."""
        return self.stored.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Hold a new registration; it is written with the tokens it obtains."""
        self.stored = self.stored.model_copy(update={"client": client_info})


class _Provider(OAuthClientProvider):
    """The SDK's provider, with the stored token's expiry restored when it loads the storage:
    the SDK sets the expiry only when it receives tokens, so after a restart it would send an
    expired token, get a 401 and ask for a new login instead of refreshing."""

    async def _initialize(self) -> None:
        await super()._initialize()
        tokens = self.context.current_tokens
        if tokens is not None and tokens.expires_in is not None:
            self.context.update_token_expiry(tokens)


class LoopbackCallback:
    """A one-shot HTTP listener on 127.0.0.1 for the authorization redirect (RFC 8252 §7.3).

    The socket is bound at once (so the redirect URI, which names the port, is known before
    the client registers); it serves from `start()` on, on the caller's event loop."""

    def __init__(self, port: int | None = None) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", port or 0))
        self._sock.listen()
        self.port = int(self._sock.getsockname()[1])
        self._server: asyncio.Server | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    @property
    def redirect_uri(self) -> str:
        """The URI the authorization server sends the browser back to."""
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def start(self) -> None:
        """Begin serving (idempotent)."""
        if self._server is None:
            self._result = asyncio.get_running_loop().create_future()
            self._server = await asyncio.start_server(self._handle, sock=self._sock)

    async def wait(self, timeout: float = CALLBACK_TIMEOUT) -> AuthorizationCodeResult:
        """The code and state the browser brought back; stops listening after it."""
        await self.start()
        assert self._result is not None and self._server is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), timeout)
        except TimeoutError:
            raise McpAuthError(f"no answer on {self.redirect_uri} within {timeout:g}s") from None
        finally:
            self._server.close()

    def close_socket(self) -> None:
        """Release the port (when serving never started, or after it stopped)."""
        self._sock.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await reader.readline()).decode("latin-1").split()
            while (await reader.readline()).strip():  # the headers: not needed
                pass
            target = urlparse(line[1]) if len(line) > 1 else urlparse("/")
            query = {k: v[0] for k, v in parse_qs(target.query).items()}
            status, answer = self._take(target.path, query)
            body = answer.encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            await writer.drain()
        finally:
            writer.close()

    def _take(self, path: str, query: dict[str, str]) -> tuple[str, str]:
        """Settle the result from one request: (HTTP status, page text)."""
        assert self._result is not None
        if path != CALLBACK_PATH or self._result.done():
            return "404 Not Found", "queryloop: nothing expected here\n"
        if "code" not in query:
            why = query.get("error_description") or query.get("error") or "no code"
            self._result.set_exception(McpAuthError(f"authorization refused: {why}"))
            return "400 Bad Request", f"queryloop: authorization refused: {why}\n"
        self._result.set_result(
            AuthorizationCodeResult(
                code=query["code"], state=query.get("state"), iss=query.get("iss")
            )
        )
        return "200 OK", "queryloop: login complete, you can close this tab\n"


@dataclass
class Interactive:
    """A login with a person: `show` presents the authorization URL (prints it; a test
    follows it), `callback` takes the redirect."""

    show: Callable[[str], Awaitable[None]]
    callback: LoopbackCallback


@dataclass
class AuthAttempt:
    """What the OAuth flow of one connection found out (read when it fails)."""

    login_required: bool = False


def client_auth(
    config: McpServerConfig, attempt: AuthAttempt, interactive: Interactive | None = None
) -> OAuthClientProvider | None:
    """The OAuth handler for a remote server (None: no token folder configured); raises
    McpAuthError for a token file that cannot be used."""
    path = token_file(config)
    if path is None:
        return None
    storage = FileTokenStorage(path, config, fresh=interactive is not None)
    if config.oauth.client_id and storage.stored.client is None:
        storage.stored = storage.stored.model_copy(
            update={"client": _preregistered(config.oauth.client_id, interactive)}
        )
    redirect = interactive.callback.redirect_uri if interactive else _redirect(config)

    async def on_redirect(url: str) -> None:
        if interactive is None:
            attempt.login_required = True
            raise McpLoginRequired(config.name)
        await interactive.callback.start()
        await interactive.show(url)

    async def on_callback() -> AuthorizationCodeResult:
        assert interactive is not None  # on_redirect raised before this otherwise
        return await interactive.callback.wait()

    metadata = OAuthClientMetadata(
        client_name="queryloop",
        redirect_uris=[AnyUrl(redirect)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
        scope=config.oauth.scopes,
    )
    return _Provider(config.url, metadata, storage, on_redirect, on_callback)


def _redirect(config: McpServerConfig) -> str:
    return f"http://127.0.0.1:{config.oauth.callback_port or 0}{CALLBACK_PATH}"


def _preregistered(client_id: str, interactive: Interactive | None) -> OAuthClientInformationFull:
    uri = interactive.callback.redirect_uri if interactive else f"http://127.0.0.1{CALLBACK_PATH}"
    return OAuthClientInformationFull(
        client_id=client_id, redirect_uris=[AnyUrl(uri)], token_endpoint_auth_method="none"
    )


def auth_summary(config: McpServerConfig) -> str:
    """`logged in`, `not logged in` or what is wrong with the token file (for listings)."""
    path = token_file(config)
    if path is None or config.transport == "stdio":
        return ""
    try:
        stored = FileTokenStorage(path, config).stored
    except McpAuthError as exc:
        return str(exc)
    return "logged in" if stored.tokens is not None else "not logged in"


def _quiet(record: logging.LogRecord) -> bool:
    """The SDK logs every failed flow with a traceback; a login that is simply needed at
    start is reported once, in the server's status, instead."""
    exc = record.exc_info[1] if record.exc_info else None
    return not isinstance(exc, McpLoginRequired)


logging.getLogger("mcp.client.auth.oauth2").addFilter(_quiet)
