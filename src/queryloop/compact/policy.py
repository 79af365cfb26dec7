"""Compaction policies: when the context shrinks, chosen by name.

* ``default`` — what queryloop always did: summarise at the autocompact threshold (167k of a
  200k window), clear old tool results locally only once the prompt cache has expired, and
  leave the rest to the API's context editing. Long sessions carry a long prefix: every
  request re-reads it from the cache.
* ``economy`` — cost-aware: shrink the context as soon as carrying it costs more than
  shrinking it, with a tighter tool-result budget and fewer recent tool results kept.

Both ways the context can shrink are a `Trade`: clearing old tool results (free to compute,
but the changed prefix is written to the cache again) and a summary (an extra request that
reads the cached prefix and writes the summary, then the new history is written again). The
economy rule is the same for both:

    shrink now  when  cache-read price x tokens freed x expected remaining requests
                      >= read price x the extra request's tokens
                         + output price x its output tokens
                         + cache-write price x the tokens written to the cache again

**Expected remaining requests** (`EconomyPolicy.expected_requests`): the number of requests
sent since the context last shrank this way, and at least `min_expected_requests`. A stretch
of work that has gone on for n requests is expected to go on about n more (the Lindy, or
Copernican, estimate: with no other knowledge we are probably in its middle). Using the
whole session's length instead would be myopic: late in a long session every small excess
would look worth a summary, and the policy would summarise every few requests. With this
estimate, a context that grows by g tokens per request and costs K to shrink is shrunk every
sqrt(K / (read price x g)) requests, which is 1/sqrt(2) of the spacing that minimises the
cost per request (the economic order quantity, sqrt(2K / (read price x g))); there the cost
is within 6 % of the optimum. A short session never reaches the spacing, so it is never
shrunk early.

A summary is judged only by what a summary alone can free: the old tool results that clearing
would remove anyway are counted as gone already (clearing is cheaper: no extra request).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, Protocol

from ..errors import ConfigError
from ..providers.models import MTOK, ModelInfo, get_model_info

if TYPE_CHECKING:
    from .config import CompactConfig

CompactionName = Literal["default", "economy"]
"""The policies a user can choose (`compaction` setting, `Agent(compaction=...)`,
`--compaction`)."""
COMPACTION_NAMES: tuple[CompactionName, ...] = ("default", "economy")


@dataclass(frozen=True, slots=True)
class CachePrices:
    """What the decision needs of a model's prices, in USD per million tokens."""

    cache_read: float
    cache_write: float
    output: float

    @classmethod
    def of(cls, info: ModelInfo, *, one_hour_writes: bool = False) -> CachePrices:
        """A model's prices (the 1-hour cache-write price when the session writes 1h)."""
        write = info.cache_write_1h_price if one_hour_writes else info.cache_write_5m_price
        return cls(cache_read=info.cache_read_price, cache_write=write, output=info.output_price)


SONNET_PRICES = CachePrices.of(get_model_info("claude-sonnet-4-5"))
"""The default for a pipeline built without a model: $0.30 read, $3.75 write, $15 output.
The decision depends on the ratios only, and every Claude model has the same ones."""


@dataclass(frozen=True, slots=True)
class Trade:
    """One way to shrink the context, in tokens."""

    freed: int
    """Tokens that every later request no longer carries."""
    rewrite: int
    """Tokens the next request writes to the cache again (the changed prefix onwards)."""
    extra_read: int = 0
    """Tokens an extra request reads from the cache (the summary request: the whole prompt)."""
    extra_output: int = 0
    """Tokens that extra request generates (the summary)."""

    def cost(self, prices: CachePrices) -> float:
        """The one-time cost of shrinking now, in USD."""
        return (
            self.extra_read * prices.cache_read
            + self.extra_output * prices.output
            + self.rewrite * prices.cache_write
        ) / MTOK

    def saving_per_request(self, prices: CachePrices) -> float:
        """What each later request saves, in USD (the freed tokens are not read again)."""
        return self.freed * prices.cache_read / MTOK

    def pays_off(self, prices: CachePrices, expected_requests: int) -> bool:
        """Whether the saving over `expected_requests` requests covers the cost."""
        if self.freed <= 0:
            return False
        return self.saving_per_request(prices) * expected_requests >= self.cost(prices)


@dataclass(frozen=True, slots=True)
class SummaryFacts:
    """What the pipeline measured before a possible summary (message estimates, in tokens)."""

    request_tokens: int
    """The next request as it stands: what the summary request reads from the cache."""
    history_tokens: int
    """The messages a summary replaces."""
    clearable_tokens: int
    """What clearing the old tool results would free anyway."""
    restored_tokens: int
    """At most what restoration puts back: tail, the user's messages, files, todos."""


TradeOf = Callable[[], Trade]
"""A trade measured only when a policy asks for it (the default never does)."""
SummaryFactsOf = Callable[[], SummaryFacts]


class CompactionPolicy(Protocol):
    """When the context shrinks. The pipeline asks; the policy never changes messages."""

    @property
    def name(self) -> CompactionName:
        """The name users choose it by."""
        ...

    def configure(self, config: CompactConfig) -> CompactConfig:
        """The configuration the pipeline runs with (the policy's budgets applied)."""
        ...

    def clear_now(self, trade: TradeOf, requests: int) -> bool:
        """Whether to clear old tool results although the prompt cache is still warm.
        `requests`: requests sent since tool results were last cleared or summarised."""
        ...

    def summarize_now(self, facts: SummaryFactsOf, requests: int) -> bool:
        """Whether to summarise although the context is below the autocompact threshold.
        `requests`: requests sent since the last summary."""
        ...

    def describe(self) -> str:
        """One sentence for people: what the policy does."""
        ...


@dataclass(frozen=True, slots=True)
class DefaultPolicy:
    """The threshold policy (module docstring): nothing early, the configuration as given."""

    name: Literal["default"] = "default"

    def configure(self, config: CompactConfig) -> CompactConfig:
        """The configuration unchanged."""
        return config

    def clear_now(self, trade: TradeOf, requests: int) -> bool:
        """Never: a warm cache is left to the API's context editing."""
        return False

    def summarize_now(self, facts: SummaryFactsOf, requests: int) -> bool:
        """Never: only the threshold summarises."""
        return False

    def describe(self) -> str:
        """One sentence for people."""
        return "default: summarise at the autocompact threshold"


@dataclass(frozen=True, slots=True)
class EconomyPolicy:
    """The cost-aware policy (module docstring). Its budgets only ever tighten the
    configuration: a smaller value configured elsewhere is kept."""

    prices: CachePrices = SONNET_PRICES
    keep_recent: int = 2
    """Recent results of clearable tools that are never cleared (default policy: 5)."""
    max_result_chars: int = 30_000
    """A single tool result above this goes to a file with a preview (default 50,000)."""
    per_message_max_chars: int = 100_000
    """The results of one turn together (default 200,000)."""
    min_expected_requests: int = 2
    summary_tokens: int = 2_000
    """The summary's expected length: output of the summary request, then written again."""
    name: Literal["economy"] = "economy"

    def configure(self, config: CompactConfig) -> CompactConfig:
        """`config` with the tool-result budget and the recent results kept tightened; a
        summary keeps the rounds of the results microcompact keeps (the current step)."""
        per_tool = {n: min(c, self.max_result_chars) for n, c in config.per_tool_max_chars.items()}
        return replace(
            config,
            keep_recent=min(config.keep_recent, self.keep_recent),
            default_max_chars=min(config.default_max_chars, self.max_result_chars),
            per_tool_max_chars=per_tool,
            per_message_max_chars=min(config.per_message_max_chars, self.per_message_max_chars),
            restore=replace(
                config.restore,
                min_tail_rounds=max(config.restore.min_tail_rounds, self.keep_recent),
            ),
        )

    def expected_requests(self, requests: int) -> int:
        """Expected remaining requests after `requests` since the last shrink (docstring)."""
        return max(self.min_expected_requests, requests)

    def clear_now(self, trade: TradeOf, requests: int) -> bool:
        """When clearing pays for writing the changed prefix again."""
        return trade().pays_off(self.prices, self.expected_requests(requests))

    def summary_trade(self, facts: SummaryFacts) -> Trade:
        """A summary in numbers: it frees what clearing cannot, costs one request that reads
        the prompt and writes `summary_tokens`, and the new history is written again."""
        kept = facts.restored_tokens + self.summary_tokens
        return Trade(
            freed=facts.history_tokens - facts.clearable_tokens - kept,
            rewrite=kept,
            extra_read=facts.request_tokens,
            extra_output=self.summary_tokens,
        )

    def summarize_now(self, facts: SummaryFactsOf, requests: int) -> bool:
        """When the summary pays for itself over the expected remaining requests."""
        trade = self.summary_trade(facts())
        return trade.pays_off(self.prices, self.expected_requests(requests))

    def describe(self) -> str:
        """One sentence for people."""
        return (
            "economy: shrink the context when carrying it costs more than shrinking it "
            f"(keeps {self.keep_recent} recent tool results; results over "
            f"{self.max_result_chars:,} characters go to a file)"
        )


DEFAULT_POLICY = DefaultPolicy()


def policy_named(name: str, prices: CachePrices = SONNET_PRICES) -> CompactionPolicy:
    """The policy called `name` (`COMPACTION_NAMES`); `prices` are the session model's."""
    if name == "default":
        return DEFAULT_POLICY
    if name == "economy":
        return EconomyPolicy(prices=prices)
    choices = ", ".join(COMPACTION_NAMES)
    raise ConfigError(f"compaction must be one of {choices}, not {name!r}")
