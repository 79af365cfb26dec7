"""The names queryloop's spans use: the OpenTelemetry GenAI semantic conventions, v1.41.0.

Development status in the conventions, so pinned here by value (the
`opentelemetry-semantic-conventions` package marks them incubating and renames them between
releases): https://github.com/open-telemetry/semantic-conventions/tree/v1.41.0/docs/gen-ai
(gen-ai-spans.md, gen-ai-agent-spans.md, anthropic.md). The GenAI conventions moved to
open-telemetry/semantic-conventions-genai after v1.41.0; these names did not change there.

What the conventions do not name (the permission decision, hooks, compaction, background
tasks) is under `queryloop.*`. docs/telemetry.md lists every span and attribute.
"""

from __future__ import annotations

from enum import StrEnum

SEMCONV_VERSION = "1.41.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}"
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The switch that records message content (prompts, answers, tool arguments and results).
Off unless set to true (or, as opentelemetry-util-genai spells it, SPAN_ONLY /
SPAN_AND_EVENT): the conventions say content SHOULD NOT be captured by default."""


class Operation(StrEnum):
    """`gen_ai.operation.name` values (the conventions' well-known list)."""

    INVOKE_AGENT = "invoke_agent"
    CHAT = "chat"
    EXECUTE_TOOL = "execute_tool"


# -- gen_ai.* (the conventions) ---------------------------------------------------------------
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
REQUEST_STREAM = "gen_ai.request.stream"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
"""Every prompt token, cached or not: Anthropic's `input_tokens` + cache read + cache
creation (anthropic.md, note 12)."""
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
CONVERSATION_ID = "gen_ai.conversation.id"
AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"
AGENT_DESCRIPTION = "gen_ai.agent.description"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
"""Opt-in (content)."""
TOOL_RESULT = "gen_ai.tool.call.result"
"""Opt-in (content)."""
INPUT_MESSAGES = "gen_ai.input.messages"
"""Opt-in (content): the conventions' input-messages JSON, as a string on spans."""
OUTPUT_MESSAGES = "gen_ai.output.messages"
"""Opt-in (content)."""
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
"""Opt-in (content)."""
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

# -- queryloop.* (what the conventions do not name) ---------------------------------------------
TERMINAL = "queryloop.terminal"
"""Why an agent turn ended (`queryloop.loop.Terminal`)."""
TURNS = "queryloop.turns"
REQUEST_PURPOSE = "queryloop.request.purpose"
"""Why a request beside the loop was sent (`compact`, `tool_use_summary`, `prompt_hook`):
its `chat` span is not one of the loop's turns."""
TOOL_OUTCOME = "queryloop.tool.outcome"
"""`ok`, `error`, `denied` or `interrupted` (`ToolOutcome`)."""
PERMISSION_DECISION = "queryloop.permission.decision"
"""`allow` or `deny`: how the permission check ended (unset: the call never got there)."""
PERMISSION_SOURCE = "queryloop.permission.decision_source"
"""Who decided: rule, mode, tool, hook, user, or (for a refusal) no_approver."""
PERMISSION_RULE = "queryloop.permission.rule"
HOOK_EVENT = "queryloop.hook.event"
HOOK_NAME = "queryloop.hook.name"
HOOK_TYPE = "queryloop.hook.type"
HOOK_EXIT_CODE = "queryloop.hook.exit_code"
HOOK_DECISION = "queryloop.hook.decision"
COMPACT_TRIGGER = "queryloop.compaction.trigger"
COMPACT_PRE_TOKENS = "queryloop.compaction.pre_tokens"
COMPACT_POST_TOKENS = "queryloop.compaction.post_tokens"
COMPACT_FREED_TOKENS = "queryloop.compaction.freed_tokens"
TASK_ID = "queryloop.task.id"
TASK_TYPE = "queryloop.task.type"
TASK_STATUS = "queryloop.task.status"
TASK_DESCRIPTION = "queryloop.task.description"

# -- span events ---------------------------------------------------------------------------------
EVENT_RETRY = "queryloop.request.retry"
"""A request was sent again: the provider's retry after an overload, rate limit or
connection error (on the `chat` span), or a stream that broke before its end (on the
`invoke_agent` span)."""
EVENT_FALLBACK = "queryloop.model.fallback"
"""The model was overloaded and the fallback model took over (on the `invoke_agent` span)."""
EVENT_TRANSITION = "queryloop.transition"
"""The loop went on for a reason other than tool results (`queryloop.loop.Continue`)."""


class ToolOutcome(StrEnum):
    """How a tool call ended, as `queryloop.tool.outcome` says it."""

    OK = "ok"
    ERROR = "error"
    DENIED = "denied"
    INTERRUPTED = "interrupted"
