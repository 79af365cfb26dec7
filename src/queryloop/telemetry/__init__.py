"""OpenTelemetry traces of a session, named by the GenAI semantic conventions (v1.41.0).

One package observes the seams that already exist, so no other package calls a tracer:
the loop's events (`ThreadTrace.run`), the tool executor's observer (`ThreadTrace` is a
`ToolObserver`), the hook runner's observer (`Telemetry.hook_started`) and the background
tasks' listener (`Telemetry.task_event`). `create_telemetry` decides once per session
whether anything is traced: with no tracer provider (none given, none registered with the
OpenTelemetry API) the session gets the no-op `Telemetry` of `base`, and OpenTelemetry is
never called. The command line builds its provider from the standard `OTEL_*` variables
(`setup`). docs/telemetry.md lists the spans, the attributes and the configuration.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .base import Telemetry, ThreadTrace
from .semconv import CAPTURE_ENV, SEMCONV_VERSION

__all__ = [
    "CAPTURE_ENV",
    "SEMCONV_VERSION",
    "Telemetry",
    "ThreadTrace",
    "capture_content_from_env",
    "create_telemetry",
]

_CAPTURE_ON = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event"})


def capture_content_from_env() -> bool:
    """Whether `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` asks for content."""
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in _CAPTURE_ON


def create_telemetry(
    tracer_provider: object | None,
    *,
    provider_name: str,
    conversation_id: Callable[[], str],
) -> Telemetry:
    """The session's tracing: on `tracer_provider` when given, else on the provider
    registered with the OpenTelemetry API (`trace.set_tracer_provider`, or the CLI's from
    `OTEL_*`); the no-op `Telemetry` when there is neither."""
    from opentelemetry import trace  # already loaded by the anthropic SDK

    registered = trace.get_tracer_provider()
    if tracer_provider is None and isinstance(registered, trace.ProxyTracerProvider):
        return Telemetry()
    from .spans import OtelTelemetry, tracer_for

    provider = tracer_provider if tracer_provider is not None else registered
    return OtelTelemetry(
        tracer_for(provider),
        provider_name=provider_name,
        conversation_id=conversation_id,
        capture_content=capture_content_from_env(),
        flush=getattr(provider, "force_flush", None),
    )
