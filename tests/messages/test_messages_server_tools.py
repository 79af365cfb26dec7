"""Web search's server-tool blocks in the message pipeline: kept through a transcript and
normalization, a paused turn sent back unchanged, the validator's rules, the token estimate
and the usage they bring."""

from __future__ import annotations

from typing import Any

from queryloop.compact.tokens import estimate_message_tokens
from queryloop.messages import (
    AssistantMessage,
    Message,
    ServerToolUseBlock,
    TextBlock,
    ThinkingBlock,
    WebSearchResult,
    WebSearchToolResultBlock,
    assistant_message,
    block_from_api,
    block_to_api,
    message_from_dict,
    message_to_dict,
    normalize_messages_for_api,
    user_message,
    validate_api_request,
)
from queryloop.messages.usage import Usage
from queryloop.messages.validate_model import ModelCapabilities, ModelRules

CALL = ServerToolUseBlock(id="srvtoolu_01", name="web_search", input={"query": "python"})
HITS = WebSearchToolResultBlock(
    tool_use_id="srvtoolu_01",
    results=(WebSearchResult("https://python.org/", "Python", "EqSecret", page_age="1 day"),),
)
CITATION = {
    "type": "web_search_result_location",
    "url": "https://python.org/",
    "title": "Python",
    "encrypted_index": "EqIndex",
    "cited_text": "Python 3.14",
}
ANSWER = TextBlock("3.14 is out.", citations=(CITATION,))
NO_PREFILL = ModelCapabilities(known=True, prefill=False)


def request(messages: list[Any]) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-5-5",
        "max_tokens": 100,
        "messages": messages,
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
    }


def errors(body: dict[str, Any], model: ModelRules | None = None) -> list[str]:
    return [v.rule for v in validate_api_request(body, model=model) if v.is_error]


def test_the_blocks_survive_a_transcript_round_trip_unchanged() -> None:
    message = assistant_message([CALL, HITS, ANSWER], stop_reason="end_turn")
    again = message_from_dict(message_to_dict(message))
    assert isinstance(again, AssistantMessage) and again.content == message.content
    error = WebSearchToolResultBlock(tool_use_id="srvtoolu_02", error_code="max_uses_exceeded")
    wire = block_to_api(error)
    assert wire["content"] == {
        "type": "web_search_tool_result_error",
        "error_code": "max_uses_exceeded",
    }
    assert block_from_api(wire) == error


def test_a_paused_turn_goes_back_unchanged_even_where_prefill_is_refused() -> None:
    history: list[Message] = [
        user_message("Search."),
        assistant_message([CALL, HITS], stop_reason="pause_turn"),
    ]
    messages = normalize_messages_for_api(history, thinking={"type": "disabled"}, prefill=False)
    assert messages[-1] == {
        "role": "assistant",
        "content": [block_to_api(CALL), block_to_api(HITS)],
    }
    assert errors(request(messages), NO_PREFILL) == []
    # With thinking on, the paused response starts with its thinking, and goes back whole.
    thought = ThinkingBlock("Searching.", signature="sig")
    history[-1] = assistant_message([thought, CALL, HITS], stop_reason="pause_turn")
    thinking = {"type": "enabled", "budget_tokens": 1024}
    messages = normalize_messages_for_api(history, thinking=thinking, prefill=False)
    assert messages[-1]["content"] == [block_to_api(b) for b in (thought, CALL, HITS)]
    body = {**request(messages), "thinking": thinking, "max_tokens": 2048}
    assert errors(body, NO_PREFILL) == []
    # A finished answer that ends the array is not paused: it still needs a user turn after it.
    done: list[Message] = [user_message("Hi."), assistant_message("Hello.")]
    assert normalize_messages_for_api(done, prefill=False)[-1]["role"] == "user"


def test_the_validator_pairs_a_search_with_its_result_inside_one_assistant_turn() -> None:
    call, hits, answer = block_to_api(CALL), block_to_api(HITS), block_to_api(ANSWER)
    user = {"role": "user", "content": "Search."}
    complete = [user, {"role": "assistant", "content": [call, hits, answer]}, user]
    assert errors(request(complete)) == []
    unanswered = [user, {"role": "assistant", "content": [call, answer]}, user]
    assert errors(request(unanswered)) == ["server_tool_use.unanswered"]
    orphan = [user, {"role": "assistant", "content": [hits, answer]}, user]
    assert "server_tool_result.orphan" in errors(request(orphan))
    in_user = [{"role": "user", "content": [hits]}]
    assert errors(request(in_user)) == ["block.role_mismatch"]
    broken = {**hits, "content": [{"type": "text", "text": "no"}]}
    assert "server_tool_result.content" in errors(
        request([user, {"role": "assistant", "content": [call, broken]}, user])
    )


def test_the_estimate_counts_the_search_results_and_citations() -> None:
    bare = estimate_message_tokens(assistant_message([TextBlock("3.14 is out.")]))
    full = estimate_message_tokens(assistant_message([CALL, HITS, ANSWER]))
    call_only = estimate_message_tokens(assistant_message([CALL]))
    assert call_only > 0 and full > bare + call_only + len("EqSecret") // 4


def test_usage_reads_and_writes_the_searches_as_the_api_does() -> None:
    usage = Usage.from_dict(
        {"input_tokens": 10, "output_tokens": 5, "server_tool_use": {"web_search_requests": 3}}
    )
    assert usage.web_search_requests == 3 and (usage + usage).web_search_requests == 6
    assert usage.to_dict()["server_tool_use"] == {"web_search_requests": 3}
    assert "server_tool_use" not in Usage(input_tokens=1).to_dict()


def test_a_paused_turn_ending_in_spaced_text_loses_only_the_trailing_whitespace() -> None:
    """Found by the property test: the API refuses a final assistant message that ends with
    whitespace, paused or not."""
    history: list[Message] = [
        user_message("search"),
        assistant_message([CALL, HITS, TextBlock("ok ")], stop_reason="pause_turn"),
    ]
    out = normalize_messages_for_api(history, thinking=False)
    assert out[-1]["content"][-1] == {"type": "text", "text": "ok"}
    assert out[-1]["content"][:2] == [block_to_api(CALL), block_to_api(HITS)]
    assert errors(request(out)) == []
