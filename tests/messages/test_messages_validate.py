"""validate_api_request: every rule fires on a broken request and stays quiet on a real one."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from queryloop.messages import Violation, validate_api_request
from queryloop.messages.validate import (
    final_turn_first_assistant,
    results_led_loop_first_assistant,
)

SIG = "EqQBCkgIARABGAIiQ"
IMAGE_SOURCE = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}


def real_request() -> dict[str, Any]:
    """A request shaped like what the Anthropic SDK sends, with every optional field in use."""
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 8192,
        "stream": True,
        "metadata": {"user_id": "u-1"},
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
        "temperature": 1,
        "stop_sequences": ["</done>"],
        "thinking": {"type": "enabled", "budget_tokens": 4096},
        "tool_choice": {"type": "auto"},
        "system": [
            {"type": "text", "text": "You are queryloop."},
            {
                "type": "text",
                "text": "Static part.",
                "cache_control": {"type": "ephemeral", "ttl": "1h"},
            },
            {"type": "text", "text": "Dynamic part.", "cache_control": {"type": "ephemeral"}},
        ],
        "tools": [
            {
                "name": "Read",
                "description": "read",
                "input_schema": {"type": "object", "properties": {}},
            },
            {"name": "Bash", "description": "run", "input_schema": {"type": "object"}},
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "<system-reminder>\nctx\n</system-reminder>"},
                    {"type": "image", "source": IMAGE_SOURCE},
                    {
                        "type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": "doc"},
                        "citations": {"enabled": True},
                    },
                    {"type": "text", "text": "Fix the bug."},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "plan", "signature": SIG},
                    {"type": "text", "text": "Looking.", "citations": None},
                    {
                        "type": "tool_use",
                        "id": "toolu_01",
                        "name": "Read",
                        "input": {"file_path": "a.py"},
                    },
                    {
                        "type": "tool_use",
                        "id": "toolu_02",
                        "name": "Bash",
                        "input": {"command": "ls"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_01",
                        "content": [
                            {"type": "text", "text": "x = 1"},
                            {"type": "image", "source": IMAGE_SOURCE},
                        ],
                    },
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_02",
                        "content": "a.py",
                        "is_error": False,
                    },
                    {"type": "text", "text": "reminder", "cache_control": {"type": "ephemeral"}},
                ],
            },
        ],
    }


def test_a_real_request_has_no_violations() -> None:
    assert validate_api_request(real_request()) == []


def test_string_content_and_plain_system_are_accepted() -> None:
    body = {
        "model": "m",
        "max_tokens": 10,
        "system": "be brief",
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert validate_api_request(body) == []


def test_consecutive_user_turns_are_combined_as_the_api_does() -> None:
    body = real_request()
    user = body["messages"][2]["content"]
    body["messages"][2]["content"] = user[:1]
    body["messages"].insert(3, {"role": "user", "content": user[1:]})
    found = validate_api_request(body)
    assert [(v.rule, v.severity) for v in found] == [("messages.consecutive_same_role", "warning")]
    # ...which is exactly why a text turn merged before the results breaks the rule.
    body["messages"].insert(2, {"role": "user", "content": "first"})
    assert "tool_result.not_first" in rules(body)


def rules(body: dict[str, Any]) -> list[str]:
    return [v.rule for v in validate_api_request(body)]


Mutation = Callable[[dict[str, Any]], object]  # what it returns is not used


def _msgs(b: dict[str, Any]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = b["messages"]
    return messages


def _set(key: str, value: Any) -> Mutation:
    def mutate(b: dict[str, Any]) -> None:
        b[key] = value

    return mutate


def _block(i: int, j: int, **changes: Any) -> Mutation:
    def mutate(b: dict[str, Any]) -> None:
        _msgs(b)[i]["content"][j].update(changes)

    return mutate


def _no_thinking(b: dict[str, Any]) -> None:
    b.pop("thinking")
    del _msgs(b)[1]["content"][0]


def _first_assistant(b: dict[str, Any]) -> None:
    _msgs(b).insert(0, {"role": "assistant", "content": "earlier"})


def _drop_result(b: dict[str, Any]) -> None:
    del _msgs(b)[2]["content"][1]


def _text_first(b: dict[str, Any]) -> None:
    content = _msgs(b)[2]["content"]
    content.insert(0, content.pop())


def _unknown_result(b: dict[str, Any]) -> None:
    _msgs(b)[0]["content"].insert(
        0, {"type": "tool_result", "tool_use_id": "toolu_99", "content": "x"}
    )


def _duplicate_result(b: dict[str, Any]) -> None:
    _msgs(b)[2]["content"].insert(
        1, {"type": "tool_result", "tool_use_id": "toolu_01", "content": "again"}
    )


def _duplicate_use(b: dict[str, Any]) -> None:
    _block(1, 3, id="toolu_01")(b)


def _final_assistant(text: str, thinking: bool = False) -> Mutation:
    def mutate(b: dict[str, Any]) -> None:
        if not thinking:
            b.pop("thinking")
        _msgs(b).append({"role": "assistant", "content": [{"type": "text", "text": text}]})

    return mutate


def _final_thinking_disabled(b: dict[str, Any]) -> None:
    b.pop("thinking")
    _msgs(b).append(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "t", "signature": SIG},
                {"type": "text", "text": "x"},
            ],
        }
    )


def _ends_with_thinking(b: dict[str, Any]) -> None:
    _msgs(b)[1]["content"].append({"type": "thinking", "thinking": "late", "signature": SIG})


def _open_loop_without_thinking(b: dict[str, Any]) -> None:
    """Ends inside the tool loop (the reminder would start a new one) without thinking."""
    _msgs(b)[1]["content"].pop(0)
    _msgs(b)[2]["content"].pop()


def _no_tools(b: dict[str, Any]) -> None:
    b.pop("tools")
    b.pop("tool_choice")


def _tool(i: int, **changes: Any) -> Mutation:
    def mutate(b: dict[str, Any]) -> None:
        b["tools"][i].update(changes)

    return mutate


def _cache_everywhere(b: dict[str, Any]) -> None:
    for tool in b["tools"][:2]:
        tool["cache_control"] = {"type": "ephemeral", "ttl": "1h"}


def _ttl_out_of_order(b: dict[str, Any]) -> None:
    _msgs(b)[2]["content"][2]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}


def _empty_messages(b: dict[str, Any]) -> None:
    b["messages"] = []


CASES: list[tuple[str, Mutation]] = [
    ("model.missing", _set("model", "")),
    ("max_tokens.invalid", _set("max_tokens", -1)),
    ("max_tokens.invalid", _set("max_tokens", True)),
    ("messages.empty", _empty_messages),
    ("messages.role", lambda b: _msgs(b).append({"role": "tool", "content": "x"})),
    ("messages.content_type", lambda b: _msgs(b).append({"role": "assistant", "content": 3})),
    ("messages.content_empty", lambda b: _msgs(b).insert(0, {"role": "user", "content": []})),
    ("block.invalid", lambda b: _msgs(b)[0]["content"].append("text")),
    (
        "block.role_mismatch",
        lambda b: _msgs(b)[0]["content"].append(
            {"type": "tool_use", "id": "t", "name": "x", "input": {}}
        ),
    ),
    ("text.empty", _block(0, 3, text="  ")),
    ("text.invalid", _block(0, 3, text=None)),
    (
        "image.source",
        _block(0, 1, source={"type": "base64", "media_type": "image/bmp", "data": "x"}),
    ),
    ("image.source", _block(0, 1, source={"type": "ftp"})),
    (
        "document.source",
        _block(0, 2, source={"type": "base64", "media_type": "text/plain", "data": "x"}),
    ),
    ("tool_use.id_pattern", _block(1, 2, id="bad id!")),
    ("tool_use.input_not_object", _block(1, 2, input="a.py")),
    ("tool_use.name", _block(1, 2, name="")),
    ("tool_use.duplicate_id", _duplicate_use),
    ("tool_use.unanswered", _drop_result),
    ("tool_use.unanswered", lambda b: _msgs(b).pop()),
    ("tool_result.not_first", _text_first),
    ("tool_result.unknown_id", _unknown_result),
    ("tool_result.duplicate_id", _duplicate_result),
    (
        "tool_result.content_type",
        _block(2, 0, content=[{"type": "tool_use", "id": "x", "name": "y", "input": {}}]),
    ),
    ("tool_result.content_type", _block(2, 0, content=5)),
    ("text.empty", _block(2, 0, content=[{"type": "text", "text": ""}])),
    ("tools.undefined", _no_tools),
    ("tools.name_pattern", _tool(0, name="read file")),
    ("tools.name_pattern", _tool(0, name="x" * 65)),
    ("tools.duplicate_name", _tool(1, name="Read")),
    ("tools.schema_not_object", _tool(0, input_schema={"type": "array"})),
    ("tools.invalid", _set("tools", {"name": "Read"})),
    ("tool_choice.invalid", _set("tool_choice", {"type": "sometimes"})),
    (
        "tool_choice.unknown_tool",
        lambda b: (b.pop("thinking"), b.update(tool_choice={"type": "tool", "name": "Nope"})),
    ),
    ("system.block_type", _set("system", [{"type": "image", "source": IMAGE_SOURCE}])),
    ("system.block_type", _set("system", 5)),
    ("cache_control.too_many", _cache_everywhere),
    ("cache_control.invalid", _block(0, 3, cache_control={"type": "persistent"})),
    ("cache_control.invalid", _block(0, 3, cache_control={"type": "ephemeral", "ttl": "2h"})),
    ("cache_control.on_empty_text", _block(0, 3, text="", cache_control={"type": "ephemeral"})),
    ("cache_control.on_thinking", _block(1, 0, cache_control={"type": "ephemeral"})),
    ("cache_control.ttl_order", _ttl_out_of_order),
    ("thinking.invalid", _set("thinking", {"type": "sometimes"})),
    ("thinking.signature_missing", _block(1, 0, signature="")),
    (
        "thinking.redacted_data",
        lambda b: _msgs(b)[1]["content"].insert(0, {"type": "redacted_thinking", "data": ""}),
    ),
    ("thinking.budget_too_small", _set("thinking", {"type": "enabled", "budget_tokens": 1023})),
    (
        "thinking.budget_exceeds_max_tokens",
        _set("thinking", {"type": "enabled", "budget_tokens": 8192}),
    ),
    ("thinking.temperature", _set("temperature", 0.5)),
    ("thinking.top_k", _set("top_k", 5)),
    ("thinking.top_p", _set("top_p", 0.9)),
    ("thinking.tool_choice", _set("tool_choice", {"type": "any"})),
    ("thinking.last_assistant_must_start_with_thinking", _open_loop_without_thinking),
    ("thinking.prefill", _final_assistant("Sure", thinking=True)),
    ("thinking.disabled_in_final_assistant", _final_thinking_disabled),
    ("assistant.final_block_thinking", _ends_with_thinking),
    ("assistant.trailing_whitespace", _final_assistant("Sure ")),
    ("temperature.range", lambda b: (b.pop("thinking"), b.update(temperature=1.5))),
    ("top_p.range", lambda b: (b.pop("thinking"), b.update(top_p=2))),
    ("top_k.range", lambda b: (b.pop("thinking"), b.update(top_k=-1))),
    ("stop_sequences.invalid", _set("stop_sequences", [" "])),
    ("metadata.invalid", _set("metadata", {"user_id": 5})),
]


@pytest.mark.parametrize(
    ("rule", "mutate"), CASES, ids=[f"{r}-{i}" for i, (r, _) in enumerate(CASES)]
)
def test_each_rule_fires(rule: str, mutate: Mutation) -> None:
    body = copy.deepcopy(real_request())
    mutate(body)
    found = validate_api_request(body)
    assert rule in [v.rule for v in found if v.is_error], found
    assert all(isinstance(v, Violation) and v.message for v in found)


def test_an_assistant_first_conversation_is_only_a_warning() -> None:
    body = copy.deepcopy(real_request())
    _first_assistant(body)
    found = {v.rule: v.severity for v in validate_api_request(body)}
    assert found.get("messages.first_role") == "warning"


def test_violations_say_where() -> None:
    body = real_request()
    _text_first(body)
    found = [v.path for v in validate_api_request(body) if v.rule == "tool_result.not_first"]
    assert found == ["messages[2].content[1]", "messages[2].content[2]"]


def test_thinking_rules_need_thinking_on() -> None:
    body = real_request()
    _no_thinking(body)
    body["temperature"] = 0.2
    body["tool_choice"] = {"type": "any"}
    body["top_k"] = 5
    assert validate_api_request(body) == []


def test_adaptive_thinking_allows_forced_tool_choice_but_not_temperature() -> None:
    body = real_request()
    body["thinking"] = {"type": "adaptive"}
    body["tool_choice"] = {"type": "any"}
    assert rules(body) == []
    body["temperature"] = 0.3
    assert rules(body) == ["thinking.temperature"]


def test_the_tool_loop_needs_thinking_only_at_its_first_assistant_message() -> None:
    body = real_request()
    _msgs(body)[2]["content"].pop()  # no reminder: the results continue the loop
    # Without interleaved thinking, later steps of the same tool loop carry none.
    _msgs(body).append(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_03", "name": "Bash", "input": {}}],
        }
    )
    _msgs(body).append(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_03", "content": "ok"}],
        }
    )
    assert validate_api_request(body) == []
    assert final_turn_first_assistant(_msgs(body)) == 1
    # A reminder beside the first results starts a new loop at the second step.
    _msgs(body)[2]["content"].append({"type": "text", "text": "reminder"})
    assert final_turn_first_assistant(_msgs(body)) == 3
    assert results_led_loop_first_assistant(_msgs(body)) == 1
    _msgs(body).append({"role": "assistant", "content": "done"})
    _msgs(body).append({"role": "user", "content": "thanks"})
    assert final_turn_first_assistant(_msgs(body)) is None
    assert validate_api_request(body) == []


def test_unknown_blocks_and_fields_are_not_judged() -> None:
    body = real_request()
    _msgs(body)[1]["content"].insert(
        3, {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}
    )
    _msgs(body)[1]["content"].insert(
        4, {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []}
    )
    _msgs(body)[2]["content"][2]["citations"] = [{"type": "char_location"}]
    body["service_tier"] = "auto"
    body["cache_control"] = {"type": "ephemeral"}
    assert validate_api_request(body) == []


def test_final_assistant_may_be_empty_or_prefill_without_thinking() -> None:
    body = real_request()
    body.pop("thinking")
    _msgs(body).append({"role": "assistant", "content": ""})
    assert validate_api_request(body) == []
    _msgs(body)[-1]["content"] = [{"type": "text", "text": "Sure:"}]
    assert validate_api_request(body) == []


def test_prefill_with_thinking_on_must_start_with_thinking() -> None:
    body = real_request()
    _msgs(body).append(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "t", "signature": SIG},
                {"type": "text", "text": "Go"},
            ],
        }
    )
    body["messages"][2]["content"].pop()  # keep one tool_result-led user turn before it
    assert validate_api_request(body) == []


def test_tool_reference_is_a_valid_tool_result_part() -> None:
    body = real_request()
    _block(2, 1, content=[{"type": "tool_reference", "tool_name": "Read"}])(body)
    assert validate_api_request(body) == []
