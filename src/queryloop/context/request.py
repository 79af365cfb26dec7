"""Cache-aware request building: one `RequestBuilder` per session.

Everything that makes up the cached prefix -- tool schemas, system blocks, the user-context
message -- is fixed when the builder is made, so every request of the session starts with the
same bytes and only the conversation's tail is new:

    tools (serialized once, never re-rendered)  ->  system blocks  ->  user context message
    -> history (normalized)  ->  newest block (carries the moving breakpoint)

Tools that are loaded later (deferred tools fetched with ToolSearch) are appended at the END of
the tools array, so the bytes of the earlier tools stay where they were.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias, cast

from ..errors import ConfigError
from ..messages.api_types import ApiSystemBlock, ApiTool
from ..messages.constructors import meta_user_message, user_message
from ..messages.incremental import IncrementalNormalizer
from ..messages.passes_thinking import thinking_holds
from ..messages.thinking_mode import THINKING_OFF, ThinkingSpec, ThinkingType
from ..messages.types import Message
from ..providers.base import ModelRequest
from ..providers.models import get_model_info
from ..tools.base import Tool, ToolContext
from ..tools.deferred import DeferredSource, loaded_deferred_tools
from .cache import BreakpointCounter, apply_cache_breakpoints
from .cache_ttl import CacheLifetime, CacheTtlSetting
from .system_prompt import build_system_prompt
from .user_context import render_user_context

ToolLike: TypeAlias = Tool | ApiTool | Mapping[str, Any]

DEFAULT_COMPACTION_INSTRUCTIONS = (
    "Your task is to create a detailed summary of the conversation so far. Keep the user's "
    "goals and their own words, the decisions made, the files and code involved, what is done, "
    "what remains (the todo list), and the exact current step. Respond with the summary only."
)


class ToolSchemaCache:
    """Tool definitions serialized once per session and handed out byte-for-byte the same.

    The first time a tool (by name) is seen its definition is rendered and stored as JSON;
    later calls parse that stored JSON, so a tool whose description or schema would render
    differently later (state, flags, a reconnected server) still sends identical bytes, and
    callers may modify what they get without touching the cache.
    """

    def __init__(self) -> None:
        self._json: dict[str, str] = {}

    def schema(self, tool: ToolLike) -> ApiTool:
        """A fresh copy of the session's definition of `tool`."""
        name = _tool_name(tool)
        if name not in self._json:
            self._json[name] = json.dumps(_render(tool), ensure_ascii=False)
        return self.get(name)

    def get(self, name: str) -> ApiTool:
        """A fresh copy of the stored definition named `name` (KeyError if never seen)."""
        return cast(ApiTool, json.loads(self._json[name]))

    def serialized(self, name: str) -> str:
        """The stored JSON text of a tool's definition (KeyError if never seen)."""
        return self._json[name]

    def __contains__(self, name: object) -> bool:
        return name in self._json


class RequestBuilder:
    """Builds every `ModelRequest` of one session (see the module docstring).

    `cache_ttl` is "5m" (default), "1h", "auto" (`context.cache_ttl`), a `CacheLifetime`
    (the thread's, with its clock), or None to send no cache_control at all.
    `thinking` is the API's thinking config (for example `{"type": "enabled",
    "budget_tokens": 4000}`); thinking blocks are kept in the history only when it is on.
    `schemas` is the cache the session's tool definitions are serialized into (default: a
    new one; give one to share its bytes with others, as subagents do).
    With `deferred_tools` and `tool_context`, the deferred tools ToolSearch has loaded (see
    `queryloop.tools.deferred`) are appended to every request's tools, in load order.
    """

    def __init__(
        self,
        *,
        model: str,
        system: Sequence[ApiSystemBlock],
        tools: Sequence[ToolLike] = (),
        user_context: Mapping[str, str] | None = None,
        cache_ttl: CacheTtlSetting | CacheLifetime | None = "5m",
        thinking: Mapping[str, Any] | None = None,
        temperature: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        deferred_tools: DeferredSource = (),
        tool_context: ToolContext | None = None,
        schemas: ToolSchemaCache | None = None,
    ) -> None:
        self.lifetime: CacheLifetime | None = (
            cache_ttl
            if isinstance(cache_ttl, CacheLifetime) or cache_ttl is None
            else CacheLifetime(cache_ttl)
        )
        """Which TTL each request writes (None: caching off)."""
        self.model = model
        self.thinking = dict(thinking) if thinking is not None else None
        self.temperature = temperature
        self.metadata = dict(metadata) if metadata else None
        self.schemas = schemas if schemas is not None else ToolSchemaCache()
        self._system: list[ApiSystemBlock] = [
            cast(ApiSystemBlock, {k: v for k, v in b.items() if k != "cache_control"})
            for b in system
        ]
        self._tool_names = _unique_names(tools)
        for tool in tools:
            self.schemas.schema(tool)  # serialize now: the session's bytes are fixed here
        self._user_context = dict(user_context or {})
        # One context message object for the whole session: the incremental normalizer
        # recognises the unchanged history by identity (prepend_user_context's text).
        self._context_message: list[Message] = (
            [meta_user_message(render_user_context(self._user_context))]
            if self._user_context
            else []
        )
        self._normalizer = IncrementalNormalizer()
        self._thinking_off = IncrementalNormalizer()
        self._breakpoints = BreakpointCounter()
        self._deferred = deferred_tools
        self._tool_context = tool_context

    @property
    def cache_ttl(self) -> CacheTtlSetting | None:
        """The `cacheTtl` setting the requests follow ("5m", "1h", "auto"; None: off)."""
        return self.lifetime.setting if self.lifetime is not None else None

    @property
    def user_context(self) -> dict[str, str]:
        """The per-session context (memory files...) the first message carries (a copy)."""
        return dict(self._user_context)

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools sent with every request, in order."""
        return list(self._tool_names)

    @property
    def thinking_enabled(self) -> bool:
        """True when the requests think: the thinking config turns it on, or it is unset and
        the model thinks by default."""
        if self.thinking is None:
            return get_model_info(self.model).default_thinking.on
        return self.thinking.get("type") != "disabled"

    def build(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        model: str | None = None,
        extra_tools: Sequence[ToolLike] = (),
    ) -> ModelRequest:
        """The request for the next model call on `messages` (the internal array); one call
        is one request sent (the `auto` cache lifetime counts it).

        User context goes first, the array is normalized for the API, and the breakpoints are
        placed on copies. Loaded deferred tools, then `extra_tools`, follow the session's tools.
        """
        tools = self._tools(extra_tools)
        history = [*self._context_message, *messages]
        info = get_model_info(model or self.model)
        # Unset, the model's own default applies: a model that thinks by default keeps its
        # signed thinking (docs/messages.md, "Requests per model").
        thinking: ThinkingSpec = (
            self.thinking if self.thinking is not None else info.default_thinking
        )
        # A prefill only where the table knows it is accepted; elsewhere the final assistant
        # message stays a finished turn and a "Continue." user note follows.
        prefill = info.known and info.prefill
        api_messages = self._normalizer.normalize(
            history, tools, thinking=thinking, prefill=prefill
        )
        sent_thinking = self.thinking
        if ThinkingType.of(thinking) is ThinkingType.ENABLED and not thinking_holds(
            history, api_messages
        ):
            # No valid thinking can open the unfinished tool loop: the whole loop goes with
            # thinking off, as the API allows (docs/messages.md, "Thinking off for a loop").
            # Its own normalizer keeps its incremental state for these requests.
            sent_thinking = dict(THINKING_OFF)
            api_messages = self._thinking_off.normalize(
                history, tools, thinking=ThinkingType.DISABLED, prefill=prefill
            )
        ttl = self.lifetime.next_ttl() if self.lifetime is not None else None
        system, api_messages = apply_cache_breakpoints(
            self._system, api_messages, ttl=ttl, counter=self._breakpoints
        )
        return ModelRequest(
            model=model or self.model,
            messages=api_messages,
            max_tokens=max_tokens,
            system=system,
            tools=tools,
            thinking=sent_thinking,
            temperature=self.temperature,
            metadata=self.metadata,
            cache_ttl=ttl,
        )

    def prefix(
        self, extra_tools: Sequence[ToolLike] = ()
    ) -> tuple[list[ApiSystemBlock], list[ApiTool]]:
        """The system blocks and tools every request starts with (no breakpoints), without
        building a request (measuring the context does not count as one)."""
        return [cast(ApiSystemBlock, dict(b)) for b in self._system], self._tools(extra_tools)

    def build_compaction_request(
        self,
        messages: Sequence[Message],
        instructions: str = DEFAULT_COMPACTION_INSTRUCTIONS,
        max_tokens: int = 20_000,
        *,
        model: str | None = None,
        extra_tools: Sequence[ToolLike] = (),
    ) -> ModelRequest:
        """The normal request plus `instructions` as a final user message.

        Tools, system and history are exactly those of the normal request, so the compaction
        call reads the session's cached prefix instead of paying for the whole history again.
        """
        summary_request = user_message(instructions, is_meta=True)
        return self.build(
            [*messages, summary_request],
            max_tokens=max_tokens,
            model=model,
            extra_tools=extra_tools,
        )

    def _tools(self, extra: Sequence[ToolLike]) -> list[ApiTool]:
        tools = [self.schemas.get(name) for name in self._tool_names]
        seen = set(self._tool_names)
        loaded = (
            loaded_deferred_tools(self._tool_context, self._deferred)
            if self._tool_context is not None
            else []
        )
        for tool in [*loaded, *extra]:
            name = _tool_name(tool)
            if name not in seen:
                seen.add(name)
                tools.append(self.schemas.schema(tool))
        return tools


def _tool_name(tool: ToolLike) -> str:
    if isinstance(tool, Mapping):
        return str(tool["name"])
    return tool.name


def _render(tool: ToolLike) -> dict[str, Any]:
    if isinstance(tool, Mapping):
        return {k: v for k, v in tool.items() if k != "cache_control"}
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.input_schema(),
    }


def _unique_names(tools: Sequence[ToolLike]) -> list[str]:
    names: list[str] = []
    for tool in tools:
        name = _tool_name(tool)
        if name in names:
            raise ConfigError(f"two tools are named {name!r}; tool names must be unique")
        names.append(name)
    return names


def thread_request_builder(
    *,
    model: str,
    instructions: str | None,
    environment: str,
    append: str | None = None,
    tools: Sequence[ToolLike],
    deferred: DeferredSource = (),
    user_context: Mapping[str, str],
    thinking: Mapping[str, Any] | None,
    tool_context: ToolContext,
    schemas: ToolSchemaCache | None = None,
    cache_ttl: CacheTtlSetting | CacheLifetime | None = "5m",
) -> RequestBuilder:
    """The request builder of one thread, the main one or a subagent's: `instructions`
    (the static part of the system prompt; None: queryloop's own), the `environment` part,
    `append`ed text, the tools sent up front and those behind ToolSearch (`deferred`)."""
    system = build_system_prompt(
        attribution=None, static_prefix=instructions, dynamic_suffix=environment, append=append
    )
    return RequestBuilder(
        model=model,
        system=system,
        tools=tools,
        user_context=user_context,
        thinking=thinking,
        deferred_tools=deferred,
        tool_context=tool_context,
        schemas=schemas,
        cache_ttl=cache_ttl,
    )
