"""The batch's session store: where every worker reads and writes the tasks' transcripts.

`session_store` (an Agent option the batch passes to each task's Agent; `--session-store`)
is either a `SessionStore` object (one process: `run_batch`) or a spec string that each
worker opens for itself (Ray pickles options to its workers: a string travels, a connection
does not). The batch reads a task's state through it before and after running the task.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import ConfigError
from ..session.store_api import SessionStore

_POSTGRES = ("postgresql://", "postgres://")


@contextmanager
def open_batch_store(spec: Any) -> Iterator[SessionStore]:
    """The store `spec` names, opened for the `with` block (and closed after it when it was
    opened here); a `SessionStore` object is used as it is."""
    if isinstance(spec, SessionStore):
        yield spec
        return
    if not isinstance(spec, str) or not spec.startswith(_POSTGRES):
        raise ConfigError(
            f"unsupported batch session store {spec!r}: give a postgresql://... DSN "
            "(or a SessionStore object)"
        )
    try:
        module = importlib.import_module("queryloop.session.postgres_store")
    except ImportError as exc:
        raise ConfigError(
            f"the PostgreSQL session store needs psycopg 3 ({exc}): "
            "pip install 'queryloop[postgres]'"
        ) from None
    store = module.PostgresSessionStore(spec)
    try:
        yield store
    finally:
        store.close()
