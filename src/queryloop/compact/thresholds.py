"""Per-model token thresholds: warning, autocompact, and the hard blocking limit.

For a context window W and a maximum output M::

    effective  = W - min(M, 20_000)          # room kept for the model's answer
    autocompact = effective - 13_000         # 167_000 for W=200k, M=64k (the reference value)
    warning    = autocompact - 20_000        # tell the user compaction is coming
    blocking   = effective - 3_000           # above this a request is refused locally

A user-set threshold (``override`` percent of the effective window, ``override_tokens``, or the
environment variable ``QUERYLOOP_AUTOCOMPACT_PCT_OVERRIDE``) is honoured exactly — lower or
higher than the default — and reported by `CompactThresholds.describe`. The one case it cannot
be honoured is above the blocking limit (such a request would be refused before autocompact
could run): then the threshold is the blocking limit and `warnings` says so in words.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ConfigError

ENV_PCT_OVERRIDE = "QUERYLOOP_AUTOCOMPACT_PCT_OVERRIDE"
MAX_OUTPUT_RESERVE = 20_000
AUTOCOMPACT_BUFFER = 13_000
WARNING_BUFFER = 20_000
BLOCKING_BUFFER = 3_000
_NO_NOTES: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CompactThresholds:
    """Token levels for one model. `source` is "default", "override" or the env var name."""

    context_window: int
    max_output_tokens: int
    effective_window: int
    autocompact: int
    warning: int
    blocking: int
    source: str = "default"
    requested: int | None = None
    """The threshold the user asked for, in tokens, before any limit (None: default)."""
    warnings: tuple[str, ...] = ()

    @classmethod
    def for_model(
        cls,
        context_window: int,
        max_output_tokens: int,
        *,
        autocompact_buffer: int = AUTOCOMPACT_BUFFER,
        warning_buffer: int = WARNING_BUFFER,
        blocking_buffer: int = BLOCKING_BUFFER,
        override: float | None = None,
        override_tokens: int | None = None,
        env: Mapping[str, str] | None = None,
    ) -> CompactThresholds:
        """Thresholds for a model. `override` is a percentage (0 < pct <= 100) of the
        effective window; `override_tokens` an absolute threshold; when neither is given
        the environment variable QUERYLOOP_AUTOCOMPACT_PCT_OVERRIDE is read."""
        if context_window <= 0 or max_output_tokens < 0:
            raise ConfigError(
                f"context_window must be positive and max_output_tokens non-negative, got "
                f"{context_window} and {max_output_tokens}"
            )
        # The reserves are the reference's for real windows; for small ones (a local model
        # with 8k, a server smaller than believed) they shrink with the window instead of
        # swallowing it.
        reserve = min(max_output_tokens, MAX_OUTPUT_RESERVE, context_window // 4)
        effective = context_window - reserve
        blocking = max(1, effective - min(blocking_buffer, effective // 4))
        default = max(1, effective - min(autocompact_buffer, effective // 2))
        requested, source = _requested(effective, override, override_tokens, env)
        autocompact, notes = default, _NO_NOTES
        if requested is not None:
            autocompact, notes = _honour(requested, blocking, source)
        return cls(
            context_window=context_window,
            max_output_tokens=max_output_tokens,
            effective_window=effective,
            autocompact=autocompact,
            warning=max(0, autocompact - warning_buffer),
            blocking=blocking,
            source=source,
            requested=requested,
            warnings=notes,
        )

    def describe(self) -> str:
        """A sentence a user can read: what the thresholds are and where they come from."""
        head = (
            f"autocompact at {self.autocompact:,} tokens, warning at {self.warning:,}, "
            f"blocking limit {self.blocking:,} (context window {self.context_window:,}, "
            f"effective {self.effective_window:,})"
        )
        if self.requested is None:
            return head + "; default threshold"
        origin = f"set by {self.source}" if self.source != "override" else "set by the caller"
        text = f"{head}; threshold {origin}: {self.requested:,} tokens requested"
        return text + "".join(f"; WARNING: {w}" for w in self.warnings)

    def percent_used(self, tokens: int) -> float:
        """How full the effective window is, 0–100+."""
        return 100.0 * tokens / self.effective_window


def _requested(
    effective: int,
    override: float | None,
    override_tokens: int | None,
    env: Mapping[str, str] | None,
) -> tuple[int | None, str]:
    if override_tokens is not None:
        if override_tokens <= 0:
            raise ConfigError(f"override_tokens must be positive, got {override_tokens}")
        return override_tokens, "override"
    if override is not None:
        return _from_pct(effective, override, "override"), "override"
    raw = (os.environ if env is None else env).get(ENV_PCT_OVERRIDE, "").strip()
    if not raw:
        return None, "default"
    try:
        pct = float(raw)
    except ValueError:
        raise ConfigError(
            f"{ENV_PCT_OVERRIDE}={raw!r} is not a number; set a percentage such as 80"
        ) from None
    return _from_pct(effective, pct, ENV_PCT_OVERRIDE), ENV_PCT_OVERRIDE


def _from_pct(effective: int, pct: float, source: str) -> int:
    if not 0 < pct <= 100:
        raise ConfigError(f"{source} must be a percentage in (0, 100], got {pct}")
    return max(1, int(effective * pct / 100))


def _honour(requested: int, blocking: int, source: str) -> tuple[int, tuple[str, ...]]:
    if requested <= blocking:
        return requested, ()
    note = (
        f"the requested autocompact threshold {requested:,} ({source}) is above the blocking "
        f"limit {blocking:,}; requests that large are refused, so autocompact runs at "
        f"{blocking:,}"
    )
    return blocking, (note,)
