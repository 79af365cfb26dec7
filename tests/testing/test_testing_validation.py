"""The testing server validates like the API: errors answered 400 (strict), warnings accepted."""

from __future__ import annotations

import anthropic
import pytest

from queryloop.testing import MessagesServer, text, turn

MODEL = "claude-sonnet-5-5"


async def test_strict_server_accepts_what_the_api_accepts_and_records_warnings() -> None:
    long_system = "You are queryloop. " * 400
    with MessagesServer([turn(text("merged"))], strict=True, min_cacheable_tokens=100) as server:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.base_url, max_retries=0)
        try:
            warm = await client.messages.create(
                model=MODEL,
                max_tokens=0,
                system=[
                    {"type": "text", "text": long_system, "cache_control": {"type": "ephemeral"}}
                ],
                messages=[{"role": "user", "content": "warm up"}],
            )
            merged = await client.messages.create(
                model=MODEL,
                max_tokens=50,
                system=long_system,
                messages=[
                    {"role": "user", "content": "one"},
                    {"role": "user", "content": "two"},
                ],
            )
        finally:
            await client.close()
    assert warm.content == [] and warm.stop_reason == "max_tokens"
    assert (warm.usage.cache_creation_input_tokens or 0) > 0
    assert [b.type for b in merged.content] == ["text"]  # the only scripted turn
    assert server.violations == [[], []]
    assert [[w.rule for w in ws] for ws in server.warnings] == [
        ["max_tokens.zero"],
        ["messages.consecutive_same_role"],
    ]


async def test_strict_server_rejects_what_the_api_rejects() -> None:
    with MessagesServer(["never used"], strict=True) as server:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=server.base_url, max_retries=0)
        try:
            with pytest.raises(anthropic.BadRequestError, match="Extra inputs are not permitted"):
                await client.messages.create(
                    model=MODEL,
                    max_tokens=50,
                    messages=[{"role": "user", "content": "hi"}],
                    extra_body={"max_token": 5},
                )
            with pytest.raises(anthropic.BadRequestError, match="prefill"):
                await client.messages.create(
                    model="claude-sonnet-4-6",
                    max_tokens=50,
                    messages=[
                        {"role": "user", "content": "hi"},
                        {"role": "assistant", "content": "Hello"},
                    ],
                )
        finally:
            await client.close()
    assert [[v.rule for v in vs] for vs in server.violations] == [
        ["request.unknown_field"],
        ["assistant.prefill_unsupported"],
    ]
    assert server.model.remaining == 1
