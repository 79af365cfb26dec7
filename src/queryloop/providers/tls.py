"""One TLS context for every model client of the process.

Each `AsyncAnthropic` / `AsyncOpenAI` client builds its own `httpx2` client, and each of
those loads the system's CA certificates into a new `ssl.SSLContext` — 20 ms on an idle
machine, over 100 ms on a loaded one, on the event loop, once per session. Forty SDK
sessions starting together waited in line behind forty such loads before the first of them
sent a request (bench/sdk_concurrency.py, docs/benchmarks.md). An `SSLContext` is safe to
share between connections and threads, so the providers build it once, the way `httpx2`
would (`SSL_CERT_FILE` / `SSL_CERT_DIR` as they were when it was first needed).

The command line builds it early, on its preload thread (`cli.preload`): OpenSSL reads the
certificates without holding the GIL, so the load runs beside the main thread's imports
instead of before the first request. The lock makes a caller that comes while it is being
built wait for that one rather than build a second.
"""

from __future__ import annotations

import ssl
import threading

import httpx2

_lock = threading.Lock()
_context: list[ssl.SSLContext] = []
"""The context once built (a list: one owner, no `global` rebinding)."""


def shared_tls_context() -> ssl.SSLContext:
    """The process's TLS context for model clients (built on first use, then reused)."""
    with _lock:
        if not _context:
            _context.append(httpx2.create_ssl_context())
        return _context[0]
