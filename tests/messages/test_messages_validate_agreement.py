"""validate_api_request agrees with the API both ways (issue 12, section 2).

Each case is one single-rule change to a request the API accepts. What the API accepts is
at most a warning; what it rejects is an error. docs/messages.md cites the source of each.
"""

from __future__ import annotations

import copy
from typing import Any

from queryloop.messages import ModelCapabilities, Severity, validate_api_request
from queryloop.providers.models import get_model_info

MID_SYSTEM = ModelCapabilities(known=True, prefill=False, mid_conversation_system=True)
NO_MID_SYSTEM = get_model_info("claude-sonnet-5")
OLD_MODEL = get_model_info("claude-sonnet-4-5")
NO_PREFILL = get_model_info("claude-sonnet-4-6")


def base() -> dict[str, Any]:
    return {
        "model": "claude-opus-5",
        "max_tokens": 1024,
        "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "Run the tests."},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}],
            },
        ],
    }


def found(body: dict[str, Any], model: Any = None) -> dict[str, Severity]:
    return {v.rule: v.severity for v in validate_api_request(body, model=model)}


def errors(body: dict[str, Any], model: Any = None) -> list[str]:
    return [v.rule for v in validate_api_request(body, model=model) if v.is_error]


SYSTEM = {"role": "system", "content": "The user also wants the changelog updated."}


# -- what the API accepts: no error (a warning at most) -----------------------------------


def test_mid_conversation_system_message_after_tool_results_is_accepted() -> None:
    body = base()
    body["messages"].append(SYSTEM)
    assert found(body, MID_SYSTEM) == {}
    body["messages"].append({"role": "assistant", "content": "Updating it."})
    assert errors(body, MID_SYSTEM) == ["assistant.prefill_unsupported"]
    body["messages"].append({"role": "user", "content": "thanks"})
    assert found(body, MID_SYSTEM) == {}


def test_system_message_on_an_unknown_model_is_a_warning() -> None:
    body = base()
    body["messages"].append(SYSTEM)
    assert found(body) == {"system_message.model_unknown": Severity.WARNING}


def test_effort_only_system_message_goes_anywhere() -> None:
    body = base()
    body["messages"].insert(
        0, {"role": "system", "content": [], "output_config": {"effort": "low"}}
    )
    assert errors(body, NO_MID_SYSTEM) == []


def test_max_tokens_zero_warms_the_cache() -> None:
    body = base()
    body["max_tokens"] = 0
    assert found(body) == {"max_tokens.zero": Severity.WARNING}


def test_assistant_first_and_consecutive_roles_are_merged_not_rejected() -> None:
    body = base()
    body["messages"].insert(0, {"role": "assistant", "content": "Hello."})
    body["messages"].insert(2, {"role": "user", "content": "Please."})
    assert found(body) == {
        "messages.first_role": Severity.WARNING,
        "messages.consecutive_same_role": Severity.WARNING,
    }


def test_prefill_on_a_model_that_supports_it_and_a_paused_turn_are_accepted() -> None:
    body = base()
    body["messages"].append({"role": "assistant", "content": "The tests"})
    assert errors(body, OLD_MODEL) == []
    paused = base()
    paused["messages"].append(
        {
            "role": "assistant",
            "content": [
                {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
            ],
        }
    )
    assert errors(paused, NO_PREFILL) == []


def test_adaptive_thinking_does_not_require_thinking_at_the_loop_start() -> None:
    body = base()
    body["thinking"] = {"type": "adaptive"}
    assert errors(body) == []
    body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    body["max_tokens"] = 2048
    assert errors(body) == ["thinking.last_assistant_must_start_with_thinking"]


def test_known_context_edits_and_clear_thinking_with_thinking_on() -> None:
    body = base()
    body["thinking"] = {"type": "adaptive"}
    body["context_management"] = {
        "edits": [
            {"type": "clear_thinking_20251015"},
            {"type": "clear_tool_uses_20250919"},
            {"type": "compact_20260112"},
        ]
    }
    assert errors(body) == []


# -- what the API rejects: an error ---------------------------------------------------------


def test_system_message_placement_and_model_support() -> None:
    def at(index: int, model: Any = MID_SYSTEM) -> list[str]:
        body = base()
        body["messages"].insert(index, copy.deepcopy(SYSTEM))
        return errors(body, model)

    assert at(0) == ["system_message.placement"]  # first
    assert at(2) == ["system_message.placement"]  # between a tool_use and its tool_result
    assert at(1) == []  # after the user, before the assistant
    assert at(3, NO_MID_SYSTEM) == ["system_message.unsupported_model"]
    body = base()
    body["messages"][1:1] = [SYSTEM, {"role": "user", "content": "more"}]
    assert "system_message.placement" in errors(body, MID_SYSTEM)  # followed by a user turn


def test_max_tokens_zero_with_streaming_or_thinking() -> None:
    for change in ({"stream": True}, {"thinking": {"type": "adaptive"}}):
        body = {**base(), "max_tokens": 0, **change}
        assert errors(body) == ["max_tokens.zero_unsupported"]


def test_unknown_top_level_field() -> None:
    body = {**base(), "max_token": 10}
    assert errors(body) == ["request.unknown_field"]


def test_unknown_content_block_type() -> None:
    body = base()
    body["messages"][0] = {"role": "user", "content": [{"type": "audio", "data": "x"}]}
    assert errors(body) == ["block.unknown_type"]


def test_cache_control_inside_tool_result_content() -> None:
    body = base()
    body["messages"][2]["content"][0]["content"] = [
        {"type": "text", "text": "ok", "cache_control": {"type": "ephemeral"}}
    ]
    assert errors(body) == ["cache_control.nested_in_tool_result"]
    body["messages"][2]["content"][0]["content"] = "ok"
    body["messages"][2]["content"][0]["cache_control"] = {"type": "ephemeral"}
    assert errors(body) == []


def test_automatic_cache_control_counts_as_a_breakpoint() -> None:
    body = base()
    body["system"] = [
        {"type": "text", "text": f"part {i}", "cache_control": {"type": "ephemeral"}}
        for i in range(3)
    ]
    body["tools"][0]["cache_control"] = {"type": "ephemeral"}
    assert errors(body) == []
    body["cache_control"] = {"type": "ephemeral"}
    assert errors(body) == ["cache_control.too_many"]


def test_prefill_on_a_model_without_prefill() -> None:
    body = base()
    body["messages"].append({"role": "assistant", "content": "The tests"})
    assert errors(body, NO_PREFILL) == ["assistant.prefill_unsupported"]
    assert errors(body, get_model_info("claude-fable-5-1")) == ["assistant.prefill_unsupported"]


def test_thinking_on_with_a_final_assistant_turn_without_thinking() -> None:
    for thinking in ({"type": "enabled", "budget_tokens": 1024}, {"type": "adaptive"}):
        body = {**base(), "thinking": thinking}
        body["messages"] = [*body["messages"][:1], {"role": "assistant", "content": "Sure"}]
        assert "thinking.prefill" in errors(body, OLD_MODEL)


def test_unknown_context_edit_and_clear_thinking_without_thinking() -> None:
    body = {**base(), "context_management": {"edits": [{"type": "clear_everything"}]}}
    assert errors(body) == ["context_management.unknown_edit"]
    body = {**base(), "context_management": {"edits": [{"type": "clear_thinking_20251015"}]}}
    assert errors(body) == ["context_management.clear_thinking_without_thinking"]


# -- issue 25.12 / 25.16: the final turn under extended thinking --------------------------

ENABLED = {"type": "enabled", "budget_tokens": 1024}


def _loop(thinking_first: bool, second_thinks: bool, between: list[dict[str, Any]]) -> Any:
    """A tool loop of two steps; `between` joins the first step's tool_result message."""
    think = [{"type": "thinking", "thinking": "plan", "signature": "sig"}]
    first = [*(think if thinking_first else []), _use("toolu_1")]
    second = [*(think if second_thinks else []), _use("toolu_2")]
    return {
        **base(),
        "max_tokens": 2048,
        "thinking": ENABLED,
        "messages": [
            {"role": "user", "content": "Run the tests."},
            {"role": "assistant", "content": first},
            {"role": "user", "content": [_result("toolu_1"), *between]},
            {"role": "assistant", "content": second},
            {"role": "user", "content": [_result("toolu_2")]},
        ],
    }


def _use(tid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": "Bash", "input": {}}


def _result(tid: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tid, "content": "ok"}


NEW_PROMPT = {"type": "text", "text": "Now run the linter too."}


def test_a_user_block_beside_tool_results_starts_a_new_assistant_loop() -> None:
    """ "When a non-tool-result user block is included, it designates a new assistant loop"
    (prompt caching, "thinking block caching"): the loop's first assistant message is then
    the one after that user message, and it must start with thinking (the API's 400)."""
    assert errors(_loop(True, True, [NEW_PROMPT]), OLD_MODEL) == []
    assert errors(_loop(True, False, [NEW_PROMPT]), OLD_MODEL) == [
        "thinking.last_assistant_must_start_with_thinking"
    ]
    # Without the user block the two steps are one loop, opened with thinking.
    assert errors(_loop(True, False, []), OLD_MODEL) == []
    assert errors(_loop(False, True, []), OLD_MODEL) == [
        "thinking.last_assistant_must_start_with_thinking"
    ]


def test_a_request_ending_with_a_new_user_block_is_no_open_tool_loop() -> None:
    body = _loop(False, False, [])
    body["messages"][-1]["content"].append(NEW_PROMPT)
    assert errors(body, OLD_MODEL) == []


# -- issue 25.16 / 25.14: what the model table says a model takes -------------------------


def _with_model(name: str) -> tuple[dict[str, Any], Any]:
    return {**base(), "model": name}, get_model_info(name)


def test_a_prefill_is_rejected_on_every_spelling_of_a_model_from_4_6_on() -> None:
    for name in (
        "us.anthropic.claude-opus-4-6-v1:0",
        "claude-sonnet-4-6@20260217",
        "claude-mythos-preview",
        "claude-opus-4-9",
        "claude-haiku-5-5",
    ):
        body, model = _with_model(name)
        body["messages"].append({"role": "assistant", "content": "The tests"})
        assert errors(body, model) == ["assistant.prefill_unsupported"], name
    body, model = _with_model("anthropic.claude-haiku-4-5-20251001-v1:0")
    body["messages"].append({"role": "assistant", "content": "The tests"})
    assert errors(body, model) == []


def test_system_messages_on_sonnet_5_5_and_haiku_5_5_are_rejected() -> None:
    for name in ("claude-sonnet-5-5", "claude-haiku-5-5"):
        body, model = _with_model(name)
        body["messages"].append(SYSTEM)
        assert errors(body, model) == ["system_message.unsupported_model"], name


def test_a_model_that_thinks_by_default_thinks_when_thinking_is_unset() -> None:
    """The thinking-only rules follow the model's default when the request sets none."""
    body, model = _with_model("claude-opus-5")
    body["context_management"] = {"edits": [{"type": "clear_thinking_20251015"}]}
    assert errors(body, model) == []
    body, model = _with_model("claude-opus-4-8")
    body["context_management"] = {"edits": [{"type": "clear_thinking_20251015"}]}
    assert errors(body, model) == ["context_management.clear_thinking_without_thinking"]


# -- issue 32.8: what the validator still accepted -------------------------------------------


def test_two_consecutive_system_messages_are_rejected() -> None:
    """Each system message that carries content must immediately follow a user turn; the
    second of two in a row follows a system message. One that only sets `output_config`
    renders nothing and may still go anywhere, also beside one that carries content."""
    body = base()
    body["messages"] += [SYSTEM, {"role": "system", "content": "And the README."}]
    assert errors(body, MID_SYSTEM) == ["system_message.consecutive"]
    body["messages"].append({"role": "assistant", "content": "Updating both."})
    body["messages"].append({"role": "user", "content": "thanks"})
    assert errors(body, MID_SYSTEM) == ["system_message.consecutive"]
    effort_only = {"role": "system", "content": [], "output_config": {"effort": "low"}}
    body = base()
    body["messages"] += [SYSTEM, effort_only]
    assert errors(body, MID_SYSTEM) == []
    body = base()
    body["messages"] += [effort_only, SYSTEM]
    assert errors(body, MID_SYSTEM) == []


def test_a_system_message_after_tool_results_starts_a_new_assistant_loop() -> None:
    """Like a user block beside the results, a system message between the results and the
    next assistant message ends the loop before it: under extended thinking the assistant
    message after it is the final loop's first and must start with thinking."""
    body = _loop(True, False, [])
    body["messages"].insert(3, copy.deepcopy(SYSTEM))
    assert errors(body, MID_SYSTEM) == ["thinking.last_assistant_must_start_with_thinking"]
    body = _loop(True, True, [])
    body["messages"].insert(3, copy.deepcopy(SYSTEM))
    assert errors(body, MID_SYSTEM) == []
    # An effort-only system message carries nothing and leaves the loop as it was.
    body = _loop(True, False, [])
    body["messages"].insert(
        3, {"role": "system", "content": [], "output_config": {"effort": "low"}}
    )
    assert errors(body, MID_SYSTEM) == []
