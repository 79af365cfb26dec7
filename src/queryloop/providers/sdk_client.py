"""What the SDK-backed providers share: an owned-or-borrowed client and its lifecycle."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from types import TracebackType
from typing import Any, Generic, Protocol, Self, TypeVar

from .retry import RetryPolicy


class _Closable(Protocol):
    async def close(self) -> None: ...


ClientT = TypeVar("ClientT", bound=_Closable)


class SDKClientProvider(Generic[ClientT]):
    """Holds the SDK client and the retry policy; closes the client only if it created it
    (a caller's client stays open). Usable as `async with provider:`."""

    def __init__(self, client: ClientT, *, owns_client: bool, retry: RetryPolicy) -> None:
        self.retry = retry
        self._client = client
        self._owns_client = owns_client

    @property
    def client(self) -> ClientT:
        """The underlying SDK client."""
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it."""
        if self._owns_client:
            await self._client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


_PARAMS: dict[Any, frozenset[str]] = {}


def split_sdk_kwargs(create: Any, body: Mapping[str, Any]) -> dict[str, Any]:
    """Known SDK parameters as keywords; everything else through `extra_body` (so a new API
    field, or one this SDK version dropped, still reaches the server)."""
    func = getattr(create, "__func__", create)
    known = _PARAMS.get(func)
    if known is None:
        known = frozenset(inspect.signature(create).parameters) - {"extra_body", "stream"}
        _PARAMS[func] = known
    kwargs = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    if extra:
        kwargs["extra_body"] = extra
    return kwargs
