"""Deterministic token counting and a prompt-cache simulation for the test server.

Token estimate: every part of a request (each tool definition, each system block, each content
block of each message) counts `ceil(len(utf8(compact_json(part))) / 4)` tokens, with its
`cache_control` removed; a message adds 4 tokens for its role framing. Output counts the same
way over the generated blocks (at least 1). It is not Claude's tokenizer, but it is stable,
monotonic in size and documented, which is what tests need.

Cache: parts are laid out in the API's order (tools → system → messages). Each `cache_control`
marker (or the top-level `cache_control` of automatic caching, which marks the last block) is a
breakpoint. A request reads the longest prefix that an earlier request wrote and that has not
expired (looking back at most 20 parts before each breakpoint, as the API does), then writes
every breakpoint prefix after it that reaches the model's minimum cacheable length. Usage is
reported as the API does: `input_tokens` is only the part after the last cache read or write.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

LOOKBACK_PARTS = 20
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
MESSAGE_OVERHEAD_TOKENS = 4


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def estimate_tokens(value: Any) -> int:
    """Tokens of one JSON-able part: UTF-8 bytes of its compact JSON / 4, rounded up."""
    return math.ceil(len(_compact(value).encode("utf-8")) / 4)


@dataclass(frozen=True, slots=True)
class _Part:
    digest_input: str
    tokens: int
    ttl: str | None  # set when this part carries a cache_control breakpoint


def _strip_cache_control(part: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    clean = {k: v for k, v in part.items() if k != "cache_control"}
    marker = part.get("cache_control")
    ttl = None
    if isinstance(marker, Mapping):
        ttl = str(marker.get("ttl") or "5m")
    return clean, ttl


def _content_blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, Mapping)]


def request_parts(body: Mapping[str, Any]) -> list[_Part]:
    """The request's parts in cache-prefix order, with their token counts and breakpoints."""
    raw: list[tuple[Mapping[str, Any], int]] = []
    raw.extend((tool, 0) for tool in body.get("tools") or [] if isinstance(tool, Mapping))
    system = body.get("system")
    if isinstance(system, str):
        raw.append(({"type": "text", "text": system}, 0))
    elif isinstance(system, list):
        raw.extend((block, 0) for block in system if isinstance(block, Mapping))
    for message in body.get("messages") or []:
        blocks = _content_blocks(message)
        for i, block in enumerate(blocks):
            overhead = MESSAGE_OVERHEAD_TOKENS if i == 0 else 0
            raw.append(({**block, "_role": message.get("role")}, overhead))
    parts = []
    for item, overhead in raw:
        clean, ttl = _strip_cache_control(item)
        parts.append(_Part(_compact(clean), estimate_tokens(clean) + overhead, ttl))
    auto = body.get("cache_control")
    if isinstance(auto, Mapping) and parts and parts[-1].ttl is None:
        last = parts[-1]
        parts[-1] = _Part(last.digest_input, last.tokens, str(auto.get("ttl") or "5m"))
    return parts


def without_cache_control(value: Any) -> Any:
    """`value` (a request body or any part of one) with every `cache_control` marker removed:
    markers move forward every request, so compare prefixes of requests without them."""
    if isinstance(value, Mapping):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value


def count_input_tokens(body: Mapping[str, Any]) -> int:
    """Every input token of a request, cached or not."""
    return sum(p.tokens for p in request_parts(body))


@dataclass(frozen=True, slots=True)
class CacheUsage:
    """The input side of a response's usage."""

    input_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    ephemeral_5m_input_tokens: int = 0
    ephemeral_1h_input_tokens: int = 0

    def to_api(self) -> dict[str, Any]:
        """The usage fields exactly as the API reports them."""
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.ephemeral_5m_input_tokens,
                "ephemeral_1h_input_tokens": self.ephemeral_1h_input_tokens,
            },
        }


class PromptCache:
    """Cache entries keyed by a running hash of the prefix; thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._entries: dict[str, float] = {}  # prefix digest -> expiry time
        self._lock = threading.Lock()

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()

    def process(self, body: Mapping[str, Any], min_cacheable_tokens: int) -> CacheUsage:
        """Look up and update the cache for one request; return its input usage."""
        parts = request_parts(body)
        digests = _prefix_digests(parts)
        totals = _prefix_totals(parts)
        breakpoints = [i for i, p in enumerate(parts) if p.ttl is not None]
        with self._lock:
            now = self._clock()
            read_end = self._longest_hit(digests, breakpoints, now)
            if read_end >= 0:
                self._refresh(digests[read_end], parts, breakpoints, read_end, now)
            writes = self._write(
                parts, digests, totals, breakpoints, read_end, min_cacheable_tokens, now
            )
        read = totals[read_end] if read_end >= 0 else 0
        written_end = max([read_end, *[i for i, _ in writes]])
        created = (totals[written_end] if written_end >= 0 else 0) - read
        uncached = (totals[-1] if parts else 0) - read - created
        return CacheUsage(
            input_tokens=uncached,
            cache_creation_input_tokens=created,
            cache_read_input_tokens=read,
            ephemeral_5m_input_tokens=sum(t for bp, t in writes if parts[bp].ttl != "1h"),
            ephemeral_1h_input_tokens=sum(t for bp, t in writes if parts[bp].ttl == "1h"),
        )

    def _longest_hit(self, digests: Sequence[str], breakpoints: Sequence[int], now: float) -> int:
        best = -1
        for bp in breakpoints:
            for i in range(bp, max(-1, bp - LOOKBACK_PARTS - 1), -1):
                expiry = self._entries.get(digests[i])
                if expiry is not None and expiry > now:
                    best = max(best, i)
                    break
        return best

    def _refresh(
        self, digest: str, parts: Sequence[_Part], breakpoints: Sequence[int], end: int, now: float
    ) -> None:
        # A hit refreshes the entry's lifetime, with the longest TTL marked at or after it.
        ttl = max(
            (TTL_SECONDS.get(parts[b].ttl or "5m", 300.0) for b in breakpoints if b >= end),
            default=300.0,
        )
        self._entries[digest] = max(self._entries[digest], now + ttl)

    def _write(
        self,
        parts: Sequence[_Part],
        digests: Sequence[str],
        totals: Sequence[int],
        breakpoints: Sequence[int],
        read_end: int,
        minimum: int,
        now: float,
    ) -> list[tuple[int, int]]:
        """Write breakpoint prefixes past the read point; returns (breakpoint, new tokens)."""
        writes: list[tuple[int, int]] = []
        previous_end = read_end
        for bp in breakpoints:
            if bp <= read_end or totals[bp] < minimum:
                continue
            self._entries[digests[bp]] = now + TTL_SECONDS.get(parts[bp].ttl or "5m", 300.0)
            start_total = totals[previous_end] if previous_end >= 0 else 0
            writes.append((bp, totals[bp] - start_total))
            previous_end = bp
        return writes


def _prefix_digests(parts: Sequence[_Part]) -> list[str]:
    running = hashlib.sha256()
    out = []
    for part in parts:
        running.update(part.digest_input.encode("utf-8"))
        running.update(b"\x00")
        out.append(running.copy().hexdigest())
    return out


def _prefix_totals(parts: Sequence[_Part]) -> list[int]:
    out = []
    total = 0
    for part in parts:
        total += part.tokens
        out.append(total)
    return out
