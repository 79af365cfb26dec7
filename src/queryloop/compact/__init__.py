"""Layered compaction: from cheap and local to expensive and global.

tool-result budget -> snip -> microcompact -> context collapse -> autocompact, with reactive
compact on prompt-too-long and a hard blocking limit. `CompactionPipeline` runs them in that
order for the query loop; each stage is also usable on its own. See docs/compaction.md.
"""

from .autocompact import (
    MAX_CONSECUTIVE_FAILURES,
    AutoCompactTracking,
    CompactionError,
    CompactionResult,
    Summarize,
    compact_conversation,
)
from .budget import BudgetResult, apply_tool_result_budget, build_preview
from .collapse import CollapseStore, summarize_rounds
from .config import CompactConfig
from .microcompact import (
    CLEARED_PLACEHOLDER,
    CONTEXT_MANAGEMENT_BETA,
    DEFAULT_CLEARABLE_TOOLS,
    MicrocompactResult,
    context_management_config,
    microcompact,
)
from .pipeline import CompactionPipeline, PreprocessResult
from .prompt import COMPACT_PROMPT, build_compact_prompt, format_summary
from .reactive import compact_with_retries, reactive_compact, truncate_head_for_ptl_retry
from .restore import RestoreContext, read_files_from_disk
from .rounds import round_starts
from .snip import SnipResult, snip_history
from .summarizer import provider_summarizer
from .thresholds import ENV_PCT_OVERRIDE, CompactThresholds
from .tokens import estimate_tokens, token_count_with_estimation

__all__ = [
    "CLEARED_PLACEHOLDER",
    "COMPACT_PROMPT",
    "CONTEXT_MANAGEMENT_BETA",
    "DEFAULT_CLEARABLE_TOOLS",
    "ENV_PCT_OVERRIDE",
    "MAX_CONSECUTIVE_FAILURES",
    "AutoCompactTracking",
    "BudgetResult",
    "CollapseStore",
    "CompactConfig",
    "CompactThresholds",
    "CompactionError",
    "CompactionPipeline",
    "CompactionResult",
    "MicrocompactResult",
    "PreprocessResult",
    "RestoreContext",
    "SnipResult",
    "Summarize",
    "apply_tool_result_budget",
    "build_compact_prompt",
    "build_preview",
    "compact_conversation",
    "compact_with_retries",
    "context_management_config",
    "estimate_tokens",
    "format_summary",
    "microcompact",
    "provider_summarizer",
    "reactive_compact",
    "read_files_from_disk",
    "round_starts",
    "snip_history",
    "summarize_rounds",
    "token_count_with_estimation",
    "truncate_head_for_ptl_retry",
]
