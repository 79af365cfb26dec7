"""MessagesServer itself: wire shapes, endpoints, the cache simulation, concurrency, shutdown."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
from typing import Any

import anthropic
import httpx

from queryloop.testing import MessagesServer, ScriptedModel, text, thinking, tool_use, turn
from queryloop.testing.tokens import PromptCache, count_input_tokens

MODEL = "claude-sonnet-5-5"


def _sse(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in body.decode().strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_sse_event_names_and_payloads_match_the_api() -> None:
    script = [
        turn(thinking("hm", signature="sig"), text("Hi"), tool_use("Read", {"file_path": "a"}))
    ]
    with MessagesServer(script) as server:
        body = {
            "model": MODEL,
            "max_tokens": 500,
            "stream": True,
            "messages": [{"role": "user", "content": "x"}],
        }
        response = httpx.post(server.base_url + "/v1/messages", json=body)
    assert response.headers["content-type"].startswith("text/event-stream")
    events = _sse(response.content)
    names = [name for name, _ in events]
    assert all(name == data["type"] for name, data in events)
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 3
    deltas = {data["delta"]["type"] for name, data in events if name == "content_block_delta"}
    assert deltas == {"thinking_delta", "signature_delta", "text_delta", "input_json_delta"}
    start = events[0][1]["message"]
    assert start["content"] == [] and start["stop_reason"] is None
    assert set(start["usage"]) >= {
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    }
    tool_start = events[names.index("content_block_start", 8)][1]
    assert tool_start["content_block"]["input"] == {}


async def test_non_streaming_count_tokens_and_errors_through_the_sdk() -> None:
    with MessagesServer([turn(text("whole"), tool_use("LS", {"path": "."}))]) as server:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.base_url, max_retries=0)
        try:
            message = await client.messages.create(
                model=MODEL, max_tokens=100, messages=[{"role": "user", "content": "hi"}]
            )
            counted = await client.messages.count_tokens(
                model=MODEL, messages=[{"role": "user", "content": "hi"}]
            )
        finally:
            await client.close()
    assert [b.type for b in message.content] == ["text", "tool_use"]
    assert message.stop_reason == "tool_use" and message.id.startswith("msg_")
    assert (
        counted.input_tokens
        == count_input_tokens({"messages": [{"role": "user", "content": "hi"}]})
        > 0
    )
    assert [r.path for r in server.recorded] == ["/v1/messages", "/v1/messages/count_tokens"]
    assert server.violations[0] == [] and len(server.violations) == 2


def _body(
    messages: list[dict[str, object]], system: str = "S" * 4000, ttl: str | None = None
) -> dict[str, object]:
    marker: dict[str, object] = {"type": "ephemeral"}
    if ttl:
        marker["ttl"] = ttl
    return {
        "model": MODEL,
        "max_tokens": 10,
        "tools": [{"name": "Read", "description": "d" * 400, "input_schema": {"type": "object"}}],
        "system": [{"type": "text", "text": system, "cache_control": marker}],
        "messages": messages,
    }


def _user(text_: str, cache: bool = False) -> dict[str, object]:
    block: dict[str, object] = {"type": "text", "text": text_}
    if cache:
        block["cache_control"] = {"type": "ephemeral"}
    return {"role": "user", "content": [block]}


def test_cache_reads_writes_and_moving_breakpoint() -> None:
    cache = PromptCache()
    long_user = "u" * 3000
    first = _body([_user(long_user, cache=True)])
    usage1 = cache.process(first, 512)
    total1 = count_input_tokens(first)
    assert usage1.cache_read_input_tokens == 0
    assert usage1.cache_creation_input_tokens == total1 and usage1.input_tokens == 0
    # Next turn: the breakpoint moves to the new last block; the old prefix is read.
    second = _body(
        [
            _user(long_user),
            {"role": "assistant", "content": [{"type": "text", "text": "a" * 800}]},
            _user("next question " * 50, cache=True),
        ]
    )
    usage2 = cache.process(second, 512)
    assert usage2.cache_read_input_tokens == total1
    assert usage2.cache_creation_input_tokens == count_input_tokens(second) - total1
    # Changing the tools (first in the prefix) invalidates everything after them.
    third = dict(
        second, tools=[{"name": "Write", "description": "x", "input_schema": {"type": "object"}}]
    )
    assert cache.process(third, 512).cache_read_input_tokens == 0


def test_minimum_length_ttl_and_expiry() -> None:
    now = [0.0]
    cache = PromptCache(clock=lambda: now[0])
    short = _body([_user("hi")], system="short")
    assert cache.process(short, 4096).cache_creation_input_tokens == 0  # below the minimum
    hour = _body([_user("hi")], ttl="1h")
    usage = cache.process(hour, 512)
    assert usage.ephemeral_1h_input_tokens == usage.cache_creation_input_tokens > 0
    assert usage.input_tokens > 0  # the message after the system breakpoint is not cached
    now[0] = 3000.0  # 50 minutes: a 1h entry is still there
    assert cache.process(hour, 512).cache_read_input_tokens > 0
    five = _body([_user("hi")], system="T" * 4000)
    cache.process(five, 512)
    now[0] += 301.0  # past 5 minutes
    assert cache.process(five, 512).cache_read_input_tokens == 0


async def test_concurrent_requests_and_clean_shutdown() -> None:
    model = ScriptedModel(lambda body: turn(text(f"echo {body['messages'][0]['content']}")))
    with MessagesServer(model) as server:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.base_url, max_retries=0)
        try:
            replies = await asyncio.gather(
                *(
                    client.messages.create(
                        model=MODEL, max_tokens=50, messages=[{"role": "user", "content": f"m{i}"}]
                    )
                    for i in range(8)
                )
            )
        finally:
            await client.close()
    assert sorted(r.content[0].text for r in replies) == sorted(f"echo m{i}" for i in range(8))  # type: ignore[union-attr]
    assert model.calls == 8 and len(server.requests) == 8
    names = [t.name for t in threading.enumerate()]
    assert not [n for n in names if "process_request" in n or "serve_forever" in n], names


def test_violations_are_recorded_per_request() -> None:
    orphan = {"type": "tool_result", "tool_use_id": "toolu_missing", "content": "r"}
    with MessagesServer(["fine", "also answered"]) as server:
        for content in ("hello", [orphan]):
            body = {
                "model": MODEL,
                "max_tokens": 50,
                "messages": [{"role": "user", "content": content}],
            }
            assert httpx.post(server.base_url + "/v1/messages", json=body).status_code == 200
    assert server.violations[0] == []
    assert "tool_result.unknown_id" in {v.rule for v in server.violations[1]}


def test_strict_mode_rejects_invalid_requests_like_the_api() -> None:
    orphan = {"type": "tool_result", "tool_use_id": "toolu_missing", "content": "r"}
    with MessagesServer(["never used"], strict=True) as server:
        body = {
            "model": MODEL,
            "max_tokens": 50,
            "messages": [{"role": "user", "content": [orphan]}],
        }
        response = httpx.post(server.base_url + "/v1/messages", json=body)
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert "tool_use" in response.json()["error"]["message"]
    assert server.model.remaining == 1


def _retransmissions(sock: socket.socket) -> int:
    """`tcpi_total_retrans` of Linux's `struct tcp_info` (offset 100): segments this socket
    sent again, its SYN included — a SYN the server's full accept queue dropped shows here."""
    info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
    return int(struct.unpack_from("I", info, 100)[0])


def test_forty_clients_connecting_at_once_are_served_without_a_retry() -> None:
    # Forty SYNs in one burst, before the server's thread can accept any: with Python's
    # default listen backlog (5) the kernel drops the rest and each client sends its SYN
    # again a second later (issue 33: forty SDK sessions starting together).
    count = 40
    request = (
        b"POST /v1/messages/count_tokens HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
        b"\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"
    )
    with MessagesServer() as server:
        _host, port = server.base_url.rsplit(":", 1)
        clients = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
        try:
            for client in clients:
                client.setblocking(False)
                client.connect_ex(("127.0.0.1", int(port)))
            for client in clients:
                client.setblocking(True)
                client.settimeout(30)
                client.sendall(request)
            replies = [client.makefile("rb").readline() for client in clients]
            retries = [_retransmissions(client) for client in clients]
        finally:
            for client in clients:
                client.close()
        served = len(server.recorded)
    assert all(reply.split()[1:2] == [b"200"] for reply in replies), replies
    assert served == count
    assert retries == [0] * count
