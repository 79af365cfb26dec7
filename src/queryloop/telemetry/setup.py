"""The command line's tracer provider, from the standard `OTEL_*` variables.

`OTEL_TRACES_EXPORTER` turns tracing on (`otlp`, `console`, both comma-separated; unset or
`none`: off, and nothing here is imported). The OpenTelemetry SDK reads the rest itself:
`OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` (the resource), `OTEL_EXPORTER_OTLP_ENDPOINT`
/ `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `..._TIMEOUT`,
`..._COMPRESSION`, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`. Here only the protocol is chosen
(`OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, default
`http/protobuf` as the specification says): each has its own exporter package.

The SDK and the OTLP/HTTP exporter come with `pip install 'queryloop[otel]'`; gRPC needs
`opentelemetry-exporter-otlp-proto-grpc` besides. A variable that asks for what is not
installed stops the command with the package to install, rather than running untraced.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ConfigError

EXPORTERS_ENV = "OTEL_TRACES_EXPORTER"
PROTOCOLS = ("http/protobuf", "grpc")
INSTALL_HINT = "pip install 'queryloop[otel]'"


def exporters_from_env(environ: Mapping[str, str]) -> list[str]:
    """The exporters `OTEL_TRACES_EXPORTER` names (empty: tracing is off)."""
    names = [n.strip().lower() for n in environ.get(EXPORTERS_ENV, "").split(",")]
    return [n for n in names if n and n != "none"]


def protocol_from_env(environ: Mapping[str, str]) -> str:
    """The OTLP protocol for traces (the traces-specific variable wins)."""
    value = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get(
        "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"
    )
    return value.strip().lower()


def setup_from_env(environ: Mapping[str, str]) -> Callable[[], None] | None:
    """Register a tracer provider built from `environ` with the OpenTelemetry API and
    return its shutdown (which exports what is still buffered); None when tracing is off.

    Raises:
        ConfigError: an unknown exporter or protocol, or the SDK or an exporter is missing.
    """
    names = exporters_from_env(environ)
    if not names:
        return None
    exporters = [_exporter(name, environ) for name in names]
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:  # pragma: no cover - _exporter imported the SDK already
        raise ConfigError(f"{EXPORTERS_ENV} needs the OpenTelemetry SDK: {INSTALL_HINT}") from exc
    provider = TracerProvider(resource=Resource.create(_default_resource(environ)))
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return provider.shutdown


def _default_resource(environ: Mapping[str, str]) -> dict[str, str]:
    """`service.name` is queryloop unless the variables name it (the SDK reads those)."""
    named = environ.get("OTEL_SERVICE_NAME") or "service.name=" in environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    return {} if named else {"service.name": "queryloop"}


def _exporter(name: str, environ: Mapping[str, str]) -> Any:
    if name == "console":
        return _console_exporter()
    if name != "otlp":
        raise ConfigError(f"{EXPORTERS_ENV}={name!r} is not supported: use otlp, console or none")
    protocol = protocol_from_env(environ)
    if protocol == "http/protobuf":
        return _import_exporter(
            "opentelemetry.exporter.otlp.proto.http.trace_exporter", INSTALL_HINT
        )()
    if protocol == "grpc":
        hint = f"{INSTALL_HINT} and pip install opentelemetry-exporter-otlp-proto-grpc"
        return _import_exporter("opentelemetry.exporter.otlp.proto.grpc.trace_exporter", hint)()
    raise ConfigError(
        f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r} is not supported for traces: use "
        f"{' or '.join(PROTOCOLS)}"
    )


def _import_exporter(module: str, hint: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module).OTLPSpanExporter
    except ImportError as exc:
        raise ConfigError(
            f"{EXPORTERS_ENV}=otlp needs {module.split('.trace')[0]}: {hint}"
        ) from exc


def _console_exporter() -> Any:
    """Spans as JSON on stderr: stdout carries the answer (and print mode's JSON)."""
    try:
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter
    except ImportError as exc:
        raise ConfigError(f"{EXPORTERS_ENV}=console needs the SDK: {INSTALL_HINT}") from exc
    return ConsoleSpanExporter(out=sys.stderr)


def continue_parent_trace(environ: Mapping[str, str]) -> None:
    """Make the span a parent process passed in `TRACEPARENT` (and `TRACESTATE`) the
    current one, so this run's spans join its trace: a `queryloop -p` run by a traced Bash
    call nests under that call."""
    carrier = {
        key.lower(): value for key, value in environ.items() if key in ("TRACEPARENT", "TRACESTATE")
    }
    if "traceparent" not in carrier:
        return
    from opentelemetry import context
    from opentelemetry.propagate import extract

    context.attach(extract(carrier))
