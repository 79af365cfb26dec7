"""What a session's caching saved and what each compaction cost and saved, from its transcript.

Both figures are estimates with a stated rule, shown by `/cost` and the session report:

* **Caching saved** = what the session's billed requests would have cost uncached (every
  prompt token -- uncached, written and read -- at the input price; the output as it was:
  `providers.models.uncached_cost_usd`) minus what they cost. Every `usage` record of the
  session's transcript counts: turns, compaction summaries, side calls, subagents' requests,
  interrupted attempts. It is negative when entries were written and never read.
* **Each compaction**:
  - `cost_usd`: its summary request(s) -- the `compact` usage records written since the
    previous compaction (a failed attempt counts toward the next one that succeeds; a
    server-side clearing and a compaction that fell back to dropping rounds cost none);
  - `rewrite_usd`: the request after it writes a new, shorter prefix where it would have
    read the old one: its cache-write tokens at the write price minus the read price;
  - `saved_usd`: the tokens it freed (context before it minus the next request's prompt),
    which every later main request up to the next compaction (or the end) would otherwise
    have carried, priced at each request's cache-read price -- the cheapest those tokens
    could have been sent, so a lower bound;
  - `net_usd` = saved - cost - rewrite.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..messages.usage import Usage
from ..providers.models import MTOK, get_model_info, uncached_cost_usd


@dataclass(frozen=True, slots=True)
class CompactionCost:
    """What one compaction cost and saved (the module docstring defines each figure)."""

    t: float
    kind: str
    cost_usd: float
    rewrite_usd: float
    freed_tokens: int | None
    requests_after: int
    saved_usd: float

    @property
    def net_usd(self) -> float:
        """Saved minus its request and the re-write it caused."""
        return self.saved_usd - self.cost_usd - self.rewrite_usd


@dataclass(frozen=True, slots=True)
class CostBreakdown:
    """A session's cost against the same requests uncached, and its compactions' economics."""

    cost_usd: float = 0.0
    uncached_cost_usd: float = 0.0
    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    compactions: tuple[CompactionCost, ...] = ()

    @property
    def cache_saved_usd(self) -> float:
        """What caching saved: uncached minus actual (negative: writes never read back)."""
        return self.uncached_cost_usd - self.cost_usd


Billed = tuple[Usage, str, float]
"""One billed request: its usage, model and cost."""


def billed_requests(records: Iterable[Mapping[str, Any]]) -> list[Billed]:
    """The billed requests of a transcript's records (its `usage` records)."""
    return [
        (
            Usage.from_dict(r.get("usage")),
            str(r.get("model") or ""),
            float(r.get("cost_usd") or 0.0),
        )
        for r in records
        if r.get("record") == "usage"
    ]


def tally(billed: Iterable[Billed]) -> tuple[float, float, int, Usage]:
    """(cost, uncached cost, requests, usage) of billed requests. A model the price table
    does not know costs nothing either way."""
    cost = uncached = 0.0
    usage = Usage()
    count = 0
    for one, model, paid in billed:
        count += 1
        usage = usage + one
        cost += paid
        if get_model_info(model).known:
            uncached += uncached_cost_usd(one, model)
    return cost, uncached, count, usage


@dataclass(frozen=True, slots=True)
class RequestFigures:
    """What the compaction figures need of one completed main request."""

    model: str
    usage: Usage


def compaction_cost(
    *,
    t: float,
    kind: str,
    cost_usd: float,
    freed_tokens: int | None,
    after: Sequence[RequestFigures],
) -> CompactionCost:
    """One compaction's figures; `after` are the main requests from the first one after it
    up to the next compaction (or the end)."""
    rewrite = 0.0
    if after:
        first = after[0]
        info = get_model_info(first.model)
        premium = _write_price(first.usage, first.model) - info.cache_read_price * (
            first.usage.cache_creation_input_tokens / MTOK
        )
        rewrite = max(0.0, premium) if info.known else 0.0
    saved = sum(
        (freed_tokens or 0) * get_model_info(r.model).cache_read_price / MTOK
        for r in after
        if get_model_info(r.model).known
    )
    return CompactionCost(t, kind, cost_usd, rewrite, freed_tokens, len(after), saved)


def _write_price(usage: Usage, model: str) -> float:
    """What `usage`'s cache writes cost (1-hour ones at their price)."""
    info = get_model_info(model)
    hour = min(usage.cache_creation_1h_input_tokens, usage.cache_creation_input_tokens)
    five = usage.cache_creation_input_tokens - hour
    return (five * info.cache_write_5m_price + hour * info.cache_write_1h_price) / MTOK


def caching_line(costs: CostBreakdown) -> str:
    """`$0.1777 (66% of the $0.2695 the same requests would have cost uncached)`, as /cost
    and the report say it."""
    uncached, saved = costs.uncached_cost_usd, costs.cache_saved_usd
    share = f"{saved / uncached:.0%} of " if uncached else ""
    return f"{_usd(saved)} ({share}the {_usd(uncached)} the same requests would have cost uncached)"


def _usd(value: float) -> str:
    return f"-${-value:.4f}" if value < 0 else f"${value:.4f}"


def compaction_line(c: CompactionCost) -> str:
    """One compaction in words: what it cost, freed and saved."""
    freed = f"freed {c.freed_tokens:,} tokens" if c.freed_tokens is not None else "freed: unknown"
    return (
        f"{c.kind}: cost ${c.cost_usd:.4f} + re-write ${c.rewrite_usd:.4f}; {freed} × "
        f"{c.requests_after} later requests = saved ${c.saved_usd:.4f}; net "
        f"{'+' if c.net_usd >= 0 else ''}{_usd(c.net_usd)}"
    )
