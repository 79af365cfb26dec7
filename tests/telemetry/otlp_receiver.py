"""A real OTLP/HTTP trace receiver for tests: a tiny HTTP server on 127.0.0.1 that decodes
each `ExportTraceServiceRequest` (protobuf, `opentelemetry-proto`) it is sent."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as it arrived: ids in hex, attributes decoded, its resource and scope."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    attributes: Mapping[str, Any]
    events: tuple[tuple[str, Mapping[str, Any]], ...]
    status_code: int
    resource: Mapping[str, Any]
    scope: str
    start_ns: int
    end_ns: int


@dataclass
class OtlpReceiver:
    """Collects the spans posted to `url` + /v1/traces; `paths` are the request paths."""

    spans: list[ReceivedSpan] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, path: str, headers: dict[str, str], body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self._lock:
            self.paths.append(path)
            self.headers.append(headers)
            self.spans.extend(_spans(request))

    def wait_for(self, name: str, timeout_s: float = 10.0) -> list[ReceivedSpan]:
        """The spans received once one named `name` (or starting with it) has arrived."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if any(s.name.startswith(name) for s in self.spans):
                    return list(self.spans)
            time.sleep(0.02)
        raise AssertionError(f"no span {name!r} arrived; got {[s.name for s in self.spans]}")

    def named(self, prefix: str) -> list[ReceivedSpan]:
        """The spans whose name starts with `prefix`, in the order they arrived."""
        with self._lock:
            return [s for s in self.spans if s.name.startswith(prefix)]

    def children(self, parent: ReceivedSpan) -> list[ReceivedSpan]:
        """The spans whose parent is `parent`."""
        with self._lock:
            return [s for s in self.spans if s.parent_span_id == parent.span_id]


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def _attributes(items: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in items}


def _spans(request: ExportTraceServiceRequest) -> Iterator[ReceivedSpan]:
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                yield ReceivedSpan(
                    name=span.name,
                    trace_id=span.trace_id.hex(),
                    span_id=span.span_id.hex(),
                    parent_span_id=span.parent_span_id.hex(),
                    kind=span.kind,
                    attributes=_attributes(span.attributes),
                    events=tuple((e.name, _attributes(e.attributes)) for e in span.events),
                    status_code=span.status.code,
                    resource=resource,
                    scope=scope_spans.scope.name,
                    start_ns=span.start_time_unix_nano,
                    end_ns=span.end_time_unix_nano,
                )


def _handler(receiver: OtlpReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            receiver.add(self.path, dict(self.headers), body)
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


class running_receiver:
    """`with running_receiver() as receiver:` a receiver listening on a free local port."""

    def __enter__(self) -> OtlpReceiver:
        self.receiver = OtlpReceiver()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.receiver))
        self.receiver.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self.receiver

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
