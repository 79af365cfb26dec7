"""The HTTP request handler behind `MessagesServer` (one thread per connection)."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from . import events as ev
from .openai_chunks import (
    chat_chunks,
    chat_completion,
    openai_error,
    openai_error_type,
    openai_fault_index,
)
from .script import Fault, ScriptExhaustedError, new_id
from .tokens import count_input_tokens, estimate_tokens

if TYPE_CHECKING:
    from .server import MessagesServer, _HTTPServer


class _Cut(Exception):
    """The scripted fault dropped the connection."""


class Handler(BaseHTTPRequestHandler):
    """Routes: POST /v1/messages, /v1/messages/count_tokens, /v1/chat/completions."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # many small SSE writes: no 40 ms Nagle/delayed-ACK stalls
    server: _HTTPServer
    timeout = 60

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: tests read `server.recorded` instead of a log."""

    @property
    def app(self) -> MessagesServer:
        return self.server.app

    # -- routing ------------------------------------------------------------------------------

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if len(raw) < length:
            # The client went away mid-body (a test that kills it): no request to answer, as
            # with a real server; parsing the rest as `{}` recorded a bogus invalid request.
            self.close_connection = True
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as exc:
            self._anthropic_error(400, "invalid_request_error", f"invalid JSON body: {exc}")
            return
        path = self.path.split("?", 1)[0]
        routes = {
            "/v1/messages": self._messages,
            "/v1/messages/count_tokens": self._count_tokens,
            "/v1/chat/completions": self._chat_completions,
        }
        route = routes.get(path)
        if route is None:
            self._anthropic_error(404, "not_found_error", f"no route for POST {path}")
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        entry = self.app.record(path, body, headers, validate=path == "/v1/messages")
        if self.app.strict and entry.violations:  # errors only: warnings are accepted
            first = entry.violations[0]
            self._anthropic_error(400, "invalid_request_error", f"{first.path}: {first.message}")
            return
        try:
            route(body)
        except (BrokenPipeError, ConnectionResetError, _Cut):
            self.close_connection = True

    # -- Anthropic ----------------------------------------------------------------------------

    def _count_tokens(self, body: dict[str, Any]) -> None:
        self._send_json(200, {"input_tokens": count_input_tokens(body)})

    def _warm_cache(self, body: dict[str, Any]) -> None:
        """max_tokens 0: write the cache, generate nothing, use no scripted turn (as the API
        answers a cache-warming request: empty content, stop_reason max_tokens)."""
        model = str(body.get("model", "claude-test"))
        usage = self.app.cache.process(body, self.app.min_cacheable_for(model)).to_api()
        empty = ev.RenderedTurn(
            blocks=(), stop_reason="max_tokens", stop_sequence=None, output_tokens=0
        )
        self._send_json(
            200, ev.message_json(empty, message_id=new_id("msg"), model=model, usage=usage)
        )

    def _messages(self, body: dict[str, Any]) -> None:
        fault = self.app.next_fault()
        if fault is not None and fault.kind == "http":
            self._anthropic_error(fault.status, fault.error_type, fault.message, fault.headers)
            return
        total = count_input_tokens(body)
        if total > self.app.context_window:
            message = f"prompt is too long: {total} tokens > {self.app.context_window} maximum"
            self._anthropic_error(400, "invalid_request_error", message)
            return
        if body.get("max_tokens") == 0:
            self._warm_cache(body)
            return
        try:
            turn = self.app.next_turn(body)
        except ScriptExhaustedError as exc:
            self._anthropic_error(400, "invalid_request_error", f"queryloop.testing: {exc}")
            return
        model = str(body.get("model", "claude-test"))
        usage = self.app.cache.process(body, self.app.min_cacheable_for(model)).to_api()
        rendered = ev.render_turn(turn, int(body.get("max_tokens") or 4096))
        message_id = new_id("msg")
        if not body.get("stream"):
            self._send_json(
                200, ev.message_json(rendered, message_id=message_id, model=model, usage=usage)
            )
            return
        self._stream_anthropic(rendered, message_id, model, usage, fault)

    def _stream_anthropic(
        self,
        rendered: ev.RenderedTurn,
        message_id: str,
        model: str,
        usage: dict[str, Any],
        fault: Fault | None,
    ) -> None:
        self._start_sse()
        self._sse(ev.message_start(message_id, model, usage))
        self._sse({"type": "ping"})
        for index, block in enumerate(rendered.blocks):
            if fault is not None and fault.kind == "stream_error" and index == fault.after_blocks:
                self._sse(ev.error_event(fault.error_type, fault.message))
                self._end_chunks()
                return
            events = ev.block_events(index, block)
            if fault is not None and fault.kind == "cut" and index == fault.after_blocks:
                # Start the block (and its first real delta), then drop the connection.
                for event in events[:3]:
                    self._sse(event)
                self._cut()
            for event in events:
                self._sse(event)
        if fault is not None and fault.kind in ("stream_error", "cut"):
            # The fault was aimed past the last block: fire it before message_delta.
            if fault.kind == "cut":
                self._cut()
            self._sse(ev.error_event(fault.error_type, fault.message))
            self._end_chunks()
            return
        for event in ev.message_end(rendered, usage):
            self._sse(event)
        self._end_chunks()

    def _anthropic_error(
        self, status: int, error_type: str, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        request_id = new_id("req")
        body = {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": request_id,
        }
        self._send_json(status, body, {"request-id": request_id, **(headers or {})})

    # -- OpenAI-compatible --------------------------------------------------------------------

    def _chat_completions(self, body: dict[str, Any]) -> None:
        fault = self.app.next_fault()
        if fault is not None and fault.kind == "http":
            error = openai_error(
                fault.status,
                fault.message,
                code=fault.error_type,
                error_type=openai_error_type(fault.status),
            )
            self._send_json(fault.status, error, fault.headers)
            return
        prompt = sum(estimate_tokens(m) for m in body.get("messages") or [])
        prompt += sum(estimate_tokens(t) for t in body.get("tools") or [])
        if prompt > self.app.context_window:
            message = (
                f"This model's maximum context length is {self.app.context_window} tokens. "
                f"However, your messages resulted in {prompt} tokens. "
                "Please reduce the length of the messages."
            )
            self._send_json(
                400,
                openai_error(
                    400, message, code="context_length_exceeded", error_type="invalid_request_error"
                ),
            )
            return
        if body.get("max_tokens") == 0:
            self._warm_cache(body)
            return
        try:
            turn = self.app.next_turn(body)
        except ScriptExhaustedError as exc:
            self._send_json(
                400,
                openai_error(
                    400, f"queryloop.testing: {exc}", code=None, error_type="invalid_request_error"
                ),
            )
            return
        limit = body.get("max_completion_tokens") or body.get("max_tokens") or 4096
        rendered = ev.render_turn(turn, int(limit))
        model = str(body.get("model", "test-model"))
        if not body.get("stream"):
            self._send_json(200, chat_completion(rendered, model=model, prompt_tokens=prompt))
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        chunks = chat_chunks(
            rendered, model=model, prompt_tokens=prompt, include_usage=include_usage
        )
        self._stream_openai(chunks, fault)

    def _stream_openai(self, chunks: list[dict[str, Any]], fault: Fault | None) -> None:
        self._start_sse()
        at = openai_fault_index(chunks, fault)
        for i, chunk in enumerate(chunks):
            if fault is not None and i == at:
                if fault.kind == "cut":
                    self._cut()
                self._data(
                    {
                        "error": {
                            "message": fault.message,
                            "type": fault.error_type,
                            "code": fault.error_type,
                        }
                    }
                )
                self._end_chunks()
                return
            self._data(chunk)
        self._write_chunk(b"data: [DONE]\n\n")
        self._end_chunks()

    # -- wire helpers -------------------------------------------------------------------------

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if "request-id" not in {k.lower() for k in (headers or {})}:
            self.send_header("request-id", new_id("req"))
        self.end_headers()
        self.wfile.write(data)

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", new_id("req"))
        self.end_headers()

    def _sse(self, event: Mapping[str, Any]) -> None:
        payload = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
        self._write_chunk(payload.encode())

    def _data(self, payload: Mapping[str, Any]) -> None:
        self._write_chunk(f"data: {json.dumps(payload)}\n\n".encode())

    def _write_chunk(self, data: bytes) -> None:
        if self.app.event_delay:
            time.sleep(self.app.event_delay)
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _end_chunks(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _cut(self) -> None:
        """Drop the connection mid-body, without the terminating chunk."""
        self.wfile.flush()
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise _Cut()
