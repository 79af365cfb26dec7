"""Every session store passes the same suite (`store_conformance.py`: how to add a store)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from store_conformance import CHECKS, StoreOpener, store_factory

from queryloop.session.store_api import SessionStore

__all__ = ["store_factory"]  # the fixture, imported so pytest finds it here


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
def test_store_conforms(store_factory: StoreOpener, check: Callable[[StoreOpener], None]) -> None:
    check(store_factory)


def test_each_store_is_a_session_store(store_factory: StoreOpener) -> None:
    assert isinstance(store_factory(), SessionStore)
