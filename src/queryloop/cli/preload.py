"""Import the model provider's SDK in a background thread while the session is prepared.

`import anthropic` is most of `queryloop -p`'s time to the first request (its generated types
package alone is thousands of pydantic classes). The command knows which SDK it will need
right after parsing its flags, so it starts that import in a daemon thread and goes on with
settings, the session file, git status, MCP servers and the system prompt; when the provider
is built, Python's import lock makes the main thread wait for whatever is left of the import.

The overlap is real only where the main thread waits (subprocesses such as git and MCP
servers, file reads) and where C code lets go of the GIL: imports are CPU work and share
it. The thread first builds the TLS context the model client will use
(`providers.tls.shared_tls_context`): OpenSSL reads the CA certificates without the GIL,
so those 20-60 ms run beside the main thread's imports. The REPL draws its prompt while
the import runs (`pending()`, `finished()`) and starts the session once it is done. See
docs/benchmarks.md for what it buys. `QUERYLOOP_PRELOAD=0` turns it off (for comparison, or
if an SDK ever misbehaves when imported from a thread).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

ENV_SWITCH = "QUERYLOOP_PRELOAD"

_running: threading.Thread | None = None
"""The thread `start_preload` started last."""

_SHARED = ("asyncio", "json", "logging", "typing_extensions", "pydantic", "pydantic.main")
"""Packages both threads import. Loaded here first, on the main thread: two threads importing
the inside of one package at once could each hold a half the other needs (importlib then
raises a deadlock error in one of them)."""


def provider_module(model: str | None, env: Mapping[str, str]) -> str | None:
    """The queryloop provider module `model` will need; None when it cannot be told cheaply
    (a wrong guess would cost a second of CPU for nothing)."""
    from ..errors import ConfigError
    from ..providers.factory import choose_provider

    try:
        choice = choose_provider(model, env=env)
    except ConfigError:
        return None  # the real start-up reports it
    if choice.kind == "anthropic":
        return "queryloop.providers.anthropic"
    return "queryloop.providers.openai_compat"


def start_preload(
    model: str | None, env: Mapping[str, str] | None = None
) -> threading.Thread | None:
    """Start importing the provider SDK for `model` in the background; the thread, or None
    when switched off or nothing to import."""
    env = os.environ if env is None else env
    if env.get(ENV_SWITCH, "1") == "0":
        return None
    module = provider_module(model, env)
    if module is None:
        return None
    import importlib

    for name in _SHARED:
        importlib.import_module(name)
    global _running
    thread = threading.Thread(target=_import, args=(module,), name="queryloop-preload", daemon=True)
    thread.start()
    _running = thread
    return thread


def pending() -> threading.Thread | None:
    """The preload thread while it is still importing, else None."""
    thread = _running
    return thread if thread is not None and thread.is_alive() else None


async def finished(thread: threading.Thread) -> None:
    """Wait for `thread`'s import without blocking the event loop (the prompt stays live)."""
    import asyncio

    await asyncio.to_thread(thread.join)


def _import(module: str) -> None:
    import importlib

    from ..providers.tls import shared_tls_context

    try:
        shared_tls_context()
        importlib.import_module(module)
    except BaseException:  # the main thread imports it again and reports what is wrong
        return


def startup_notices(model: str | None, env: Mapping[str, str] | None = None) -> list[str]:
    """What to tell the person before any request: today, that a base URL without a key is
    used without one (a proxy may need none; a 401 says it does)."""
    from ..errors import ConfigError
    from ..providers.factory import choose_provider, keyless_base_url

    env = os.environ if env is None else env
    try:
        choice = choose_provider(model, env=env)
    except ConfigError:
        return []
    url = (
        keyless_base_url(base_url=choice.base_url, env=env) if choice.kind == "anthropic" else None
    )
    if url is None:
        return []
    return [
        f"ANTHROPIC_BASE_URL is {url} and no ANTHROPIC_API_KEY is set: requests go there "
        "without a key (right for a proxy that adds its own; if it answers 401, set "
        "ANTHROPIC_API_KEY)"
    ]
