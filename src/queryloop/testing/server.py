"""`MessagesServer`: a real local HTTP server that speaks the Anthropic Messages API.

It runs in a background thread on 127.0.0.1 with a free port. Point the official `anthropic`
SDK (or queryloop's providers) at `server.base_url` with any API key, and the OpenAI SDK at
`server.base_url + "/v1"`. A `ScriptedModel` decides what the model says; faults are queued with
`server.inject(...)`. Every request body is kept (`requests`), with its time of arrival
(`recorded`) and the API-rule violations `validate_api_request` found in it (`violations`).
"""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Any

from ..messages.validate import Violation, validate_api_request
from .script import Fault, ScriptedModel, ScriptExhaustedError, Turn, TurnSource, as_model

DEFAULT_MIN_CACHEABLE = 1024


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received."""

    path: str
    body: dict[str, Any]
    headers: Mapping[str, str]
    received_at: float
    """`time.monotonic()` when the request arrived (same clock as the test process)."""
    violations: tuple[Violation, ...] = ()
    """The API rules the body broke that the real API rejects (errors)."""
    warnings: tuple[Violation, ...] = ()
    """What the real API accepts but flags (merged turns, a cache-warming request, ...)."""


@dataclass(slots=True)
class _State:
    recorded: list[RecordedRequest] = field(default_factory=list)
    faults: deque[Fault] = field(default_factory=deque)
    errors: list[str] = field(default_factory=list)


class MessagesServer:
    """A scripted Messages API server; use it as a context manager.

    Args:
        model: a `ScriptedModel`, a list of turns, or a callable `(request_body) -> Turn`.
        context_window: above this many input tokens a request gets the API's
            "prompt is too long" error (token estimate: see `queryloop.testing.tokens`).
        min_cacheable_tokens: the smallest prefix the cache stores; None uses the model table.
        event_delay: seconds between SSE events (slow streaming).
        clock: the cache's clock (inject one to test expiry).
        strict: answer a request that breaks an API rule with a 400 invalid_request_error,
            as the real API would (by default it is answered and the violation only recorded).
            Warnings (what the API accepts) never cause an error response.
    """

    def __init__(
        self,
        model: ScriptedModel | TurnSource | None = None,
        *,
        context_window: int = 200_000,
        min_cacheable_tokens: int | None = None,
        event_delay: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
        strict: bool = False,
    ) -> None:
        from .tokens import PromptCache

        self.model = as_model(model)
        self.context_window = context_window
        self.min_cacheable_tokens = min_cacheable_tokens
        self.event_delay = event_delay
        self.strict = strict
        self.cache = PromptCache(clock)
        self._state = _State()
        self._lock = threading.Lock()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> MessagesServer:
        """Bind a free port on 127.0.0.1 and serve in a background thread."""
        if self._httpd is not None:
            return self
        from .handler import Handler

        httpd = _HTTPServer(("127.0.0.1", 0), Handler)
        httpd.app = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections and join every thread."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.drop_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> MessagesServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- what tests use -----------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT` (the Anthropic SDK's base_url; OpenAI's is this + "/v1")."""
        if self._httpd is None:
            raise RuntimeError("the MessagesServer is not running; use it as a context manager")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def recorded(self) -> list[RecordedRequest]:
        """Every request received, in order."""
        with self._lock:
            return list(self._state.recorded)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of every request received, in order."""
        return [r.body for r in self.recorded]

    @property
    def violations(self) -> list[list[Violation]]:
        """Per request, the API rules its body broke that the real API rejects (errors;
        empty lists when all were valid)."""
        return [list(r.violations) for r in self.recorded]

    @property
    def warnings(self) -> list[list[Violation]]:
        """Per request, what the real API accepts but the validator flags."""
        return [list(r.warnings) for r in self.recorded]

    @property
    def errors(self) -> list[str]:
        """Problems the server saw that the test should know of (unexpected model calls)."""
        with self._lock:
            return list(self._state.errors)

    def inject(self, *faults: Fault) -> None:
        """Queue faults; each request to a model endpoint consumes the next one."""
        with self._lock:
            self._state.faults.extend(faults)

    def script(self, model: ScriptedModel | TurnSource) -> ScriptedModel:
        """Replace the scripted model; returns it."""
        self.model = as_model(model)
        return self.model

    def assert_complete(self) -> None:
        """Fail if the server saw errors or scripted turns were left unused."""
        if self.errors:
            raise AssertionError("; ".join(self.errors))
        self.model.assert_complete()

    # -- used by the handler ------------------------------------------------------------------

    def record(
        self, path: str, body: dict[str, Any], headers: Mapping[str, str], validate: bool
    ) -> RecordedRequest:
        """Keep a request (validated against its model's rules when it is a Messages API
        body; errors and warnings are kept apart)."""
        found: list[Violation] = []
        if validate:
            from ..providers.models import get_model_info

            try:
                found = validate_api_request(body, model=get_model_info(str(body.get("model"))))
            except Exception as exc:  # a validator bug must not take the server down
                found = [Violation("validator_crashed", repr(exc))]
        entry = RecordedRequest(
            path,
            body,
            dict(headers),
            time.monotonic(),
            tuple(v for v in found if v.is_error),
            tuple(v for v in found if not v.is_error),
        )
        with self._lock:
            self._state.recorded.append(entry)
        return entry

    def next_fault(self) -> Fault | None:
        """Pop the next queued fault."""
        with self._lock:
            return self._state.faults.popleft() if self._state.faults else None

    def next_turn(self, body: dict[str, Any]) -> Turn:
        """Ask the scripted model; a script overrun is recorded and re-raised."""
        try:
            return self.model.next_turn(body)
        except ScriptExhaustedError as exc:
            with self._lock:
                self._state.errors.append(str(exc))
            raise

    def min_cacheable_for(self, model: str) -> int:
        """The minimum cacheable prefix for `model`."""
        if self.min_cacheable_tokens is not None:
            return self.min_cacheable_tokens
        from ..providers.models import get_model_info

        return get_model_info(model).min_cacheable_tokens


class _HTTPServer(ThreadingHTTPServer):
    """Tracks open connections so `stop()` can close idle keep-alive sockets at once."""

    daemon_threads = True
    request_queue_size = 1024
    """The listen backlog (Python's default is 5): forty sessions that connect at once are
    all queued instead of having their SYN dropped and sent again a second later (the
    kernel caps it at net.core.somaxconn)."""
    app: MessagesServer

    def __init__(self, address: tuple[str, int], handler: Any) -> None:
        self._connections: set[socket.socket] = set()
        self._conn_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conn_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conn_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        with self._conn_lock:
            conns: Iterable[socket.socket] = list(self._connections)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
