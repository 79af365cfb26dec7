"""`CompactConfig`: every knob of the compaction pipeline (`pipeline`), in one frozen value.
Fractions are of the autocompact threshold (`thresholds`); the configured policy may tighten
the budgets (`policy.CompactionPolicy.configure`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from .microcompact import DEFAULT_CLEARABLE_TOOLS
from .policy import DEFAULT_POLICY, CompactionPolicy
from .restore import RestoreContext
from .thresholds import CompactThresholds


@dataclass(frozen=True, slots=True)
class CompactConfig:
    """Every knob of the pipeline. Fractions are of the autocompact threshold."""

    context_window: int = 200_000
    max_output_tokens: int = 64_000
    autocompact_enabled: bool = True
    autocompact_pct_override: float | None = None
    autocompact_threshold_tokens: int | None = None
    env: Mapping[str, str] | None = None
    """Where QUERYLOOP_AUTOCOMPACT_PCT_OVERRIDE is read (None: os.environ)."""
    per_tool_max_chars: Mapping[str, int] = field(default_factory=dict)
    default_max_chars: int = 50_000
    per_message_max_chars: int = 200_000
    snip_enabled: bool = False
    snip_at_fraction: float = 0.9
    snip_keep_head: int = 1
    snip_keep_tail_fraction: float = 0.4
    microcompact_enabled: bool = True
    microcompact_at_fraction: float = 0.5
    keep_recent: int = 5
    cache_ttl_s: float = 300.0
    clearable_tools: Collection[str] = DEFAULT_CLEARABLE_TOOLS
    server_context_editing: bool = True
    server_clear_at_least: int = 20_000
    collapse_enabled: bool = True
    collapse_stage_fraction: float = 0.85
    collapse_target_fraction: float = 0.6
    collapse_keep_recent_rounds: int = 4
    restore: RestoreContext = field(default_factory=RestoreContext)
    policy: CompactionPolicy = DEFAULT_POLICY
    """When to shrink before the threshold; it may tighten the budgets above (`configure`)."""

    def thresholds(self) -> CompactThresholds:
        """The thresholds this configuration gives (user overrides honoured and reported)."""
        return CompactThresholds.for_model(
            self.context_window,
            self.max_output_tokens,
            override=self.autocompact_pct_override,
            override_tokens=self.autocompact_threshold_tokens,
            env=self.env,
        )
