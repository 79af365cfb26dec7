"""The real spans: OpenTelemetry's API over the seams the loop already has.

Nothing here is called by the loop, the tools or the hooks directly. A thread's
`OtelThreadTrace` reads the loop's events (as the session's timing records do), is the
thread's `ToolObserver`, and the session's `OtelTelemetry` is the hook runner's observer and
a `TaskManager` listener. The trace of one prompt:

    invoke_agent queryloop                 (a prompt, to its terminal)
    ├── chat claude-sonnet-5-5             (one model request; retries are its events)
    ├── execute_tool Bash                  (one tool call: outcome, who refused it)
    │   └── hook PreToolUse                (a hook handler that ran for it)
    ├── execute_tool Agent
    │   └── invoke_agent general-purpose   (the subagent, nested under the call)
    ├── chat claude-haiku-5-5              (a request beside the loop: a summary, a
    │                                       prompt hook; queryloop.request.purpose)
    ├── compaction auto                    (freed tokens)
    └── hook Stop

Parents: the prompt's span is a child of whatever span is current when the prompt starts (a
caller's own span; under a tool call, the Agent tool's span); its chat and tool spans are its
children. The turn's context is attached while the loop's own code runs (`run`: one step at
a time, never while the caller's code runs between events), and a tool's span is attached in
the task that runs the call, so what starts there (a hook, a subagent, a Bash process's
`TRACEPARENT`) finds its parent as OpenTelemetry's current span.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, StatusCode, Tracer

from ..errors import ConfigError
from ..hooks.config import CallableHook, CommandHook, Hook, HttpHook
from ..hooks.events import HookEvent
from ..hooks.shell import HookRun
from ..hooks.verdict import interpret
from ..providers.base import ModelProvider
from ..tasks.events import TaskEvent, TaskEventKind, TaskStatus
from . import semconv
from .base import Telemetry, ThreadTrace
from .side_requests import TracedProvider
from .thread_trace import OtelThreadTrace

SCOPE = "queryloop"
"""The instrumentation scope of queryloop's spans."""


class OtelTelemetry(Telemetry):
    """A session's tracing on an OpenTelemetry tracer (see the module docstring)."""

    enabled = True

    def __init__(
        self,
        tracer: Tracer,
        *,
        provider_name: str,
        conversation_id: Callable[[], str],
        capture_content: bool = False,
        flush: Callable[[], object] | None = None,
    ) -> None:
        self.tracer = tracer
        self.provider_name = provider_name
        self.conversation_id = conversation_id
        self.capture_content = capture_content
        self._flush = flush
        self._tasks: dict[str, Span] = {}

    def thread(
        self, *, agent_name: str, model: str, agent_id: str | None = None, description: str = ""
    ) -> ThreadTrace:
        return OtelThreadTrace(
            self, agent_name=agent_name, model=model, agent_id=agent_id, description=description
        )

    # ---- hooks ---------------------------------------------------------------------------

    def hook_started(self, event: HookEvent, hook: Hook) -> Callable[[HookRun], None]:
        span = self.tracer.start_span(
            f"hook {event.value}",
            kind=SpanKind.INTERNAL,
            attributes={
                semconv.HOOK_EVENT: event.value,
                semconv.HOOK_NAME: hook.label,
                semconv.HOOK_TYPE: _hook_type(hook),
                semconv.CONVERSATION_ID: self.conversation_id(),
            },
        )

        # Current while the handler runs (the runner calls both ends in the handler's own
        # task), so what it starts, a prompt hook's model request, is drawn under it.
        token = otel_context.attach(trace.set_span_in_context(span))

        def finished(run: HookRun) -> None:
            otel_context.detach(token)
            if run.exit_code is not None:
                span.set_attribute(semconv.HOOK_EXIT_CODE, run.exit_code)
            verdict, _warnings = interpret(event, run)
            decision = verdict.decision or ("block" if verdict.block is not None else "")
            if decision:
                span.set_attribute(semconv.HOOK_DECISION, decision)
            if run.error is not None:
                span.set_attribute(semconv.ERROR_TYPE, "hook_error")
                span.set_status(StatusCode.ERROR)
            span.end()

        return finished

    def side_requests(self, provider: ModelProvider, purpose: str) -> ModelProvider:
        return TracedProvider(provider, self, purpose)

    # ---- background tasks ----------------------------------------------------------------

    def task_event(self, event: TaskEvent) -> None:
        if event.kind is TaskEventKind.STARTED:
            self._tasks[event.task_id] = self.tracer.start_span(
                f"background_task {event.task_type.value}",
                kind=SpanKind.INTERNAL,
                attributes={
                    semconv.TASK_ID: event.task_id,
                    semconv.TASK_TYPE: event.task_type.value,
                    semconv.TOOL_CALL_ID: event.tool_use_id,
                    semconv.CONVERSATION_ID: self.conversation_id(),
                    **self._content(semconv.TASK_DESCRIPTION, event.description),
                },
            )
        elif event.kind is TaskEventKind.FINISHED:
            span = self._tasks.pop(event.task_id, None)
            if span is not None:
                span.set_attribute(semconv.TASK_STATUS, event.status.value)
                if event.status is TaskStatus.FAILED:
                    span.set_attribute(semconv.ERROR_TYPE, "task_failed")
                    span.set_status(StatusCode.ERROR)
                span.end()

    def _content(self, key: str, value: str) -> dict[str, str]:
        return {key: value} if self.capture_content else {}

    def flush(self) -> None:
        if self._flush is not None:
            self._flush()


def _hook_type(hook: Hook) -> str:
    if isinstance(hook, CommandHook):
        return "command"
    if isinstance(hook, HttpHook):
        return "http"
    if isinstance(hook, CallableHook):
        return "callable"
    return "prompt"


def tracer_for(provider: object) -> Tracer:
    """queryloop's tracer (its instrumentation scope) from `provider`, a `TracerProvider`.

    Raises:
        ConfigError: `provider` is not a tracer provider.
    """
    get_tracer = getattr(provider, "get_tracer", None)
    if get_tracer is None:
        raise ConfigError(
            f"tracer_provider must be an OpenTelemetry TracerProvider, got {provider!r}"
        )
    tracer: Tracer = get_tracer(SCOPE, _version(), schema_url=semconv.SCHEMA_URL)
    return tracer


def _version() -> str:
    try:
        return importlib.metadata.version("queryloop")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a bare checkout
        return ""
