"""The pure stream assembler: raw event dicts in, canonical events out (no network)."""

from __future__ import annotations

import json

import pytest

from queryloop.messages.blocks import TextBlock, ThinkingBlock, ToolUseBlock, block_to_api
from queryloop.providers.assembler import StreamAssembler
from queryloop.providers.base import (
    BlockComplete,
    BlockStart,
    InputJsonDelta,
    MessageComplete,
    MessageDelta,
    MessageStart,
    TextDelta,
    ThinkingDelta,
)
from queryloop.providers.errors import StreamInterruptedError


def _start(usage: dict[str, object] | None = None) -> dict[str, object]:
    return {
        "type": "message_start",
        "message": {"id": "msg_1", "model": "claude-x", "content": [], "usage": usage or {}},
    }


def _block(index: int, block: dict[str, object]) -> dict[str, object]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, object]) -> dict[str, object]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _stop(index: int) -> dict[str, object]:
    return {"type": "content_block_stop", "index": index}


def test_tool_input_assembled_from_awkward_pieces_and_completed_at_block_stop() -> None:
    raw = json.dumps({"file_path": "caf\u00e9/\u2603.py", "n": [1, 2]}, ensure_ascii=True)
    cut = raw.index("\\u") + 3  # inside the first unicode escape
    pieces = ["", raw[:5], raw[5:cut], raw[cut:]]
    asm = StreamAssembler()
    out = asm.feed(_start())
    out += asm.feed(_block(0, {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}))
    deltas = []
    for piece in pieces:
        deltas += asm.feed(_delta(0, {"type": "input_json_delta", "partial_json": piece}))
    assert [d.partial_json for d in deltas if isinstance(d, InputJsonDelta)] == pieces[1:]
    assert not asm.completed_blocks  # nothing is complete before content_block_stop
    done = asm.feed(_stop(0))
    assert done == [
        BlockComplete(0, ToolUseBlock("toolu_1", "Read", {"file_path": "café/☃.py", "n": [1, 2]}))
    ]
    assert isinstance(out[0], MessageStart) and isinstance(out[1], BlockStart)
    assert out[1].tool_use_id == "toolu_1" and out[1].tool_name == "Read"


def test_text_thinking_signature_and_usage_merge() -> None:
    asm = StreamAssembler()
    asm.feed(_start({"input_tokens": 10, "cache_read_input_tokens": 7, "output_tokens": 1}))
    asm.feed(_block(0, {"type": "thinking", "thinking": "", "signature": ""}))
    think = asm.feed(_delta(0, {"type": "thinking_delta", "thinking": "hmm"}))
    asm.feed(_delta(0, {"type": "signature_delta", "signature": "sig-1"}))
    asm.feed(_stop(0))
    asm.feed(_block(1, {"type": "text", "text": ""}))
    texts = asm.feed(_delta(1, {"type": "text_delta", "text": "Hi"}))
    texts += asm.feed(_delta(1, {"type": "text_delta", "text": " there"}))
    asm.feed(_stop(1))
    delta = asm.feed(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {
                "output_tokens": 42,
                "cache_creation_input_tokens": 5,
                "cache_creation": {"ephemeral_1h_input_tokens": 5},
            },
        }
    )
    final = asm.feed({"type": "message_stop"})
    assert think == [ThinkingDelta(0, "hmm")]
    assert texts == [TextDelta(1, "Hi"), TextDelta(1, " there")]
    assert isinstance(delta[0], MessageDelta) and delta[0].stop_reason == "end_turn"
    assert isinstance(final[0], MessageComplete)
    response = final[0].response
    assert response.content == (ThinkingBlock("hmm", "sig-1"), TextBlock("Hi there"))
    assert response.usage.input_tokens == 10
    assert response.usage.cache_read_input_tokens == 7
    assert response.usage.cache_creation_input_tokens == 5
    assert response.usage.cache_creation_1h_input_tokens == 5
    assert response.usage.output_tokens == 42


def test_error_event_mid_stream_carries_completed_blocks() -> None:
    asm = StreamAssembler()
    asm.feed(_start())
    asm.feed(_block(0, {"type": "text", "text": ""}))
    asm.feed(_delta(0, {"type": "text_delta", "text": "done part"}))
    asm.feed(_stop(0))
    asm.feed(_block(1, {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {}}))
    with pytest.raises(StreamInterruptedError) as info:
        asm.feed({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert info.value.completed_blocks == (TextBlock("done part"),)
    assert "overloaded_error" in str(info.value)
    assert info.value.message_id == "msg_1"


def test_finish_without_message_stop_is_interrupted() -> None:
    asm = StreamAssembler()
    asm.feed(_start())
    asm.feed(_block(0, {"type": "text", "text": ""}))
    with pytest.raises(StreamInterruptedError, match="before message_stop"):
        asm.finish()


def test_ping_unknown_events_and_unknown_blocks_are_ignored() -> None:
    asm = StreamAssembler()
    asm.feed(_start())
    assert asm.feed({"type": "ping"}) == []
    assert asm.feed({"type": "some_future_event"}) == []
    assert asm.feed(_block(0, {"type": "mcp_tool_use", "id": "srv", "name": "web"})) == []
    assert asm.feed(_delta(0, {"type": "input_json_delta", "partial_json": "{}"})) == []
    assert asm.feed(_stop(0)) == []
    asm.feed({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}})
    assert asm.feed({"type": "message_stop"})[0].response.content == ()  # type: ignore[union-attr]


def test_web_search_blocks_and_citations_are_kept_as_the_api_streams_them() -> None:
    hit = {
        "type": "web_search_result",
        "url": "https://a.org/",
        "title": "A",
        "encrypted_content": "E",
    }
    cite = {"type": "web_search_result_location", "url": "https://a.org/", "cited_text": "x"}
    asm = StreamAssembler()
    asm.feed(_start())
    asm.feed(_block(0, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search"}))
    asm.feed(_delta(0, {"type": "input_json_delta", "partial_json": '{"query": '}))
    asm.feed(_delta(0, {"type": "input_json_delta", "partial_json": '"a"}'}))
    asm.feed(_stop(0))
    result: dict[str, object] = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [hit],
    }
    asm.feed(_block(1, result))
    asm.feed(_stop(1))
    asm.feed(_block(2, {"type": "text", "text": ""}))
    asm.feed(_delta(2, {"type": "citations_delta", "citation": cite}))
    asm.feed(_delta(2, {"type": "text_delta", "text": "A says x."}))
    asm.feed(_stop(2))
    usage = {"output_tokens": 9, "server_tool_use": {"web_search_requests": 1}}
    asm.feed({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage})
    response = asm.finish() if asm.feed({"type": "message_stop"}) else None
    assert response is not None and response.usage.web_search_requests == 1
    assert [block_to_api(b) for b in response.content] == [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "a"},
        },
        result,
        {"type": "text", "text": "A says x.", "citations": [cite]},
    ]


def _cut_tool_use(asm: StreamAssembler) -> None:
    asm.feed(_start())
    asm.feed(_block(0, {"type": "text", "text": ""}))
    asm.feed(_delta(0, {"type": "text_delta", "text": "Reading."}))
    asm.feed(_stop(0))
    asm.feed(_block(1, {"type": "tool_use", "id": "t", "name": "Read", "input": {}}))
    asm.feed(_delta(1, {"type": "input_json_delta", "partial_json": '{"a": '}))
    assert asm.feed(_stop(1)) == []


def test_invalid_tool_json_is_a_typed_error() -> None:
    asm = StreamAssembler()
    _cut_tool_use(asm)
    asm.feed({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}})
    with pytest.raises(StreamInterruptedError, match="invalid JSON") as caught:
        asm.feed({"type": "message_stop"})
    assert [b.type for b in caught.value.completed_blocks] == ["text"]


def test_tool_use_cut_at_max_tokens_is_dropped_from_a_complete_reply() -> None:
    asm = StreamAssembler()
    _cut_tool_use(asm)
    asm.feed({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {}})
    [done] = asm.feed({"type": "message_stop"})
    assert done.response.stop_reason == "max_tokens"  # type: ignore[union-attr]
    assert [b.type for b in done.response.content] == ["text"]  # type: ignore[union-attr]
