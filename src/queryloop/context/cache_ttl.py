"""How long each request's prompt-cache entries live: the `cacheTtl` setting.

The API keeps a cached prefix 5 minutes, or an hour when the breakpoint says
`{"type": "ephemeral", "ttl": "1h"}`; every read refreshes it. Writing costs 1.25x the input
price for 5 minutes and 2x for an hour; a read costs 0.1x either way
(https://platform.claude.com/docs/en/build-with-claude/prompt-caching, "1-hour cache
duration"). In a tool loop requests come seconds apart and 5 minutes is always enough. But a
person reading an answer, an idle REPL, a script that runs `queryloop --continue` every ten
minutes, leave gaps in which a 5-minute entry expires, and the next request writes the whole
conversation again at 1.25x -- where an hour-long entry would have been read at 0.1x.

* `"5m"` (default) and `"1h"`: every request writes entries of that lifetime.
* `"auto"`: a request writes `"1h"` entries when, within the last hour, a gap between two
  requests of the thread (start to start) was longer than `AUTO_GAP_SECONDS` (4 minutes: a
  5-minute entry written at a request's start would barely, or not, survive it) and at most
  `AUTO_WINDOW_SECONDS` (an hour: a longer gap outlives a 1-hour entry too, so it says
  nothing in its favour); otherwise `"5m"`. Its premise: the next gap will look like the
  recent ones. A resumed session's first gap counts from its transcript's last request.

All breakpoints of one request carry the same TTL, so the API's rule that longer-lived
entries come before shorter-lived ones ("Cache entries with longer TTL must appear before
shorter TTLs") always holds.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Literal, TypeAlias, cast, get_args

from ..errors import ConfigError

CacheTtl: TypeAlias = Literal["5m", "1h"]
"""A lifetime the API takes."""
CacheTtlSetting: TypeAlias = Literal["5m", "1h", "auto"]
"""What `cacheTtl` may say."""

CACHE_TTL_SETTINGS: tuple[str, ...] = get_args(CacheTtlSetting)
TTL_SECONDS: dict[str, float] = {"5m": 300.0, "1h": 3600.0}
AUTO_GAP_SECONDS = 240.0
"""`auto`: a gap longer than this (and at most `AUTO_WINDOW_SECONDS`) calls for 1-hour entries."""
AUTO_WINDOW_SECONDS = 3600.0
"""`auto`: gaps count for this long after they ended."""


def parse_cache_ttl(value: object) -> CacheTtlSetting:
    """`value` as a `cacheTtl` setting; ConfigError naming the valid ones otherwise."""
    if isinstance(value, str) and value in CACHE_TTL_SETTINGS:
        return cast(CacheTtlSetting, value)
    valid = ", ".join(CACHE_TTL_SETTINGS)
    raise ConfigError(f"cache_ttl (the cacheTtl setting) must be one of {valid}, got {value!r}")


class CacheLifetime:
    """The lifetime each request of one thread writes (see the module docstring).

    `next_ttl()` is called once per request sent, at its start; `auto` measures the gaps
    between those calls with `clock` (wall-clock seconds; injectable for tests).
    `last_request_at` is when the thread's previous request started (a resumed session's
    transcript knows it).
    """

    def __init__(
        self,
        setting: CacheTtlSetting = "5m",
        *,
        clock: Callable[[], float] = time.time,
        last_request_at: float | None = None,
    ) -> None:
        self.setting: CacheTtlSetting = parse_cache_ttl(setting)
        self._clock = clock
        self._last_start = last_request_at
        self._long_gaps: deque[float] = deque()
        """When each recent qualifying gap ended (oldest first)."""
        self.last_ttl: CacheTtl | None = None
        """The lifetime the last request wrote (None before the first)."""

    def next_ttl(self) -> CacheTtl:
        """The lifetime the request starting now writes (recorded as a request start)."""
        now = self._clock()
        if self._last_start is not None:
            gap = now - self._last_start
            if AUTO_GAP_SECONDS < gap <= AUTO_WINDOW_SECONDS:
                self._long_gaps.append(now)
        self._last_start = now
        self.last_ttl = self._decide(now)
        return self.last_ttl

    def current_ttl(self) -> CacheTtl:
        """The lifetime the cached prefix has now: the last request's, else what the next
        would write if it started now (without counting as a request)."""
        return self.last_ttl or self._decide(self._clock())

    def seconds(self) -> float:
        """How long the cached prefix lives after the last request (`current_ttl`)."""
        return TTL_SECONDS[self.current_ttl()]

    def _decide(self, now: float) -> CacheTtl:
        if self.setting != "auto":
            return self.setting
        while self._long_gaps and now - self._long_gaps[0] > AUTO_WINDOW_SECONDS:
            self._long_gaps.popleft()
        return "1h" if self._long_gaps else "5m"
