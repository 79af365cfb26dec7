"""Provider and test-server throughput: plain script, prints numbers.

1. The pure StreamAssembler: raw events per second (a long text + tool_use response).
2. AnthropicProvider against queryloop.testing.MessagesServer over real local HTTP:
   sequential requests per second and streamed events per second.
"""

from __future__ import annotations

import asyncio
import time

from queryloop.providers import AnthropicProvider, ModelRequest, StreamAssembler
from queryloop.testing import MessagesServer, text, tool_use, turn
from queryloop.testing import events as ev


def bench_assembler() -> None:
    rendered = ev.render_turn(
        turn(text("lorem ipsum " * 2000), tool_use("Write", {"content": "x\u00e9" * 5000})), 10**9
    )
    raw = [ev.message_start("msg", "m", {"input_tokens": 1})]
    for index, block in enumerate(rendered.blocks):
        raw.extend(ev.block_events(index, block))
    raw.extend(ev.message_end(rendered, {}))
    rounds = 20
    started = time.perf_counter()
    for _ in range(rounds):
        assembler = StreamAssembler()
        for event in raw:
            assembler.feed(event)
        assembler.finish()
    elapsed = time.perf_counter() - started
    print(
        f"assembler: {len(raw) * rounds / elapsed:,.0f} raw events/s ({len(raw)} events/response)"
    )


async def bench_http(requests: int = 50) -> None:
    script = [turn(text("hello " * 50), tool_use("Read", {"file_path": "a.py"}))] * requests
    request = ModelRequest(
        model="claude-sonnet-5-5",
        max_tokens=4096,
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    )
    with MessagesServer(script) as server:
        async with AnthropicProvider(api_key="bench", base_url=server.base_url) as provider:
            events = 0
            started = time.perf_counter()
            for _ in range(requests):
                async for _event in provider.stream(request):
                    events += 1
            elapsed = time.perf_counter() - started
    print(
        f"http: {requests / elapsed:,.1f} streamed requests/s, {events / elapsed:,.0f} events/s, "
        f"{elapsed / requests * 1000:.1f} ms per request"
    )


if __name__ == "__main__":
    bench_assembler()
    asyncio.run(bench_http())
