"""Unit tests for every pass of normalize_messages_for_api, and for the whole pipeline."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from queryloop.messages import (
    PASSES,
    AssistantMessage,
    AttachmentMessage,
    Message,
    NormalizeContext,
    SystemSubtype,
    TextBlock,
    ThinkingBlock,
    ThinkingType,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    attachment_message,
    compact_boundary,
    normalize_messages_for_api,
    system_message,
    tombstone,
    validate_api_request,
)
from queryloop.messages import normalize as n
from queryloop.messages.types import ProgressMessage, ToolUseSummaryMessage

CTX = NormalizeContext(tool_names=frozenset({"Read", "Bash"}), thinking=ThinkingType.DISABLED)
THINK = NormalizeContext(tool_names=frozenset({"Read", "Bash"}), thinking=ThinkingType.ENABLED)
TOOLS = [
    {"name": "Read", "input_schema": {"type": "object"}},
    {"name": "Bash", "input_schema": {"type": "object"}},
]


def user(text: str) -> UserMessage:
    return UserMessage(content=text)


def results(*ids: str) -> UserMessage:
    return UserMessage(content=tuple(ToolResultBlock(tool_use_id=i, content=f"r{i}") for i in ids))


def assistant(*blocks: Any, mid: str = "") -> AssistantMessage:
    return AssistantMessage(content=tuple(blocks), message_id=mid)


def use(tid: str) -> ToolUseBlock:
    return ToolUseBlock(id=tid, name="Bash", input={"command": "ls"})


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def test_passes_are_named_in_one_ordered_tuple_with_docstrings() -> None:
    names = [name for name, _ in PASSES]
    assert names == [
        "drop_before_compact_boundary",
        "dedupe_by_uuid",
        "reorder_attachments",
        "drop_non_api_messages",
        "render_attachments",
        "merge_messages",
        "tool_results_first",
        "drop_empty_text",
        "strip_thinking",
        "pair_tool_results",
        "drop_trailing_thinking",
        "close_tool_turn_without_thinking",
        "ensure_alternation",
        "check_invariants",
    ]
    for _, run in PASSES:
        assert run.__doc__ and "Needs:" in run.__doc__ and "Guarantees:" in run.__doc__


# -- reorder_attachments ----------------------------------------------------------------


def test_attachments_bubble_up_to_the_nearest_stop_point() -> None:
    a1 = assistant(use("t1"))
    r1 = results("t1")
    u = user("next")
    att = attachment_message("text", content="ctx")
    u0 = user("hi")
    assert n.reorder_attachments([u0, a1, r1, u, att], CTX) == [u0, a1, r1, att, u]
    # An assistant message is a stop point too.
    assert n.reorder_attachments([u0, a1, u, att], CTX) == [u0, a1, att, u]


def test_first_turn_attachments_go_right_after_the_first_user_message_in_order() -> None:
    u0, u1 = user("a"), user("b")
    att1, att2 = attachment_message("text", content="1"), attachment_message("text", content="2")
    assert n.reorder_attachments([u0, att1, u1, att2], CTX) == [u0, att1, att2, u1]


def test_attachments_above_every_message_stay_at_the_top() -> None:
    u0 = user("a")
    att1 = attachment_message("text", content="1")
    assert n.reorder_attachments([att1, u0], CTX) == [att1, u0]


def test_a_continuation_has_no_first_user_stop_point() -> None:
    u0, u1 = user("a"), user("b")
    att = attachment_message("text", content="1")
    cont = replace(CTX, continuation=True)
    assert n.reorder_attachments([u0, u1, att], cont) == [att, u0, u1]


def test_first_turn_file_attachment_needs_no_placeholder() -> None:
    from queryloop.messages import normalize_messages_for_api

    context = user("<system-reminder>session context</system-reminder>")
    prompt = user("read it")
    att = attachment_message("file", path="/p/a.txt", content="hello")
    api = normalize_messages_for_api(
        [context, prompt, att], [{"name": "Read"}], thinking_enabled=False
    )
    assert [m["role"] for m in api] == ["user", "assistant", "user"]
    assert api[0]["content"][0]["text"].startswith("<system-reminder>session context")
    assert api[1]["content"][0]["type"] == "tool_use"
    assert [b["type"] for b in api[2]["content"]] == ["tool_result", "text"]


def test_reorder_handles_a_long_run_of_attachments() -> None:
    # 10k attachments after one stop point would be quadratic with list.insert(0, ...).
    many: list[Message] = [assistant(TextBlock(text="x"))]
    many += [attachment_message("text", content=str(i)) for i in range(10_000)]
    out = n.reorder_attachments(many, CTX)
    assert out[0] is many[0] and out[1:] == many[1:]


# -- drop_non_api_messages --------------------------------------------------------------


def test_drops_what_never_reaches_the_api() -> None:
    keep_u, keep_a = user("keep"), assistant(TextBlock(text="keep"))
    voided = user("voided")
    messages: list[Message] = [
        keep_u,
        ProgressMessage(tool_use_id="t"),
        voided,
        tombstone(voided.uuid),
        tombstone("no-such-uuid"),
        ToolUseSummaryMessage(summary="s"),
        compact_boundary("auto", 100),
        system_message(SystemSubtype.API_ERROR, "boom"),
        UserMessage(content="virtual", is_virtual=True),
        AssistantMessage(content=(TextBlock(text="API Error"),), is_api_error=True),
        keep_a,
    ]
    assert n.drop_non_api_messages(messages, CTX) == [keep_u, keep_a]


def test_local_command_output_becomes_user_text() -> None:
    (out,) = n.drop_non_api_messages([system_message(SystemSubtype.LOCAL_COMMAND, "3 files")], CTX)
    assert isinstance(out, UserMessage) and out.is_meta
    assert out.content == "<local-command-stdout>3 files</local-command-stdout>"


# -- render_attachments -----------------------------------------------------------------


def test_render_makes_drafts_and_synthetic_read_pairs() -> None:
    file_att = attachment_message("file", path="a.py", content="x = 1")
    drafts = n.render_attachments(
        [user("hi"), file_att, attachment_message("text", content="note")], CTX
    )
    roles = [d[0] for d in drafts]
    assert roles == ["user", "assistant", "user", "user"]
    assert (
        drafts[1][1][0]["name"] == "Read"
        and drafts[1][1][0]["id"] == drafts[2][1][0]["tool_use_id"]
    )
    assert drafts[3][1] == [text("<system-reminder>\nnote\n</system-reminder>")]


def test_render_drops_attachments_that_render_to_nothing() -> None:
    assert n.render_attachments([attachment_message("opaque", value=1)], CTX) == []


# -- merge_messages ---------------------------------------------------------------------


def test_split_response_merges_even_across_streamed_tool_results() -> None:
    drafts: list[n.Draft] = [
        ("user", [text("go")], ""),
        ("assistant", [text("a")], "msg_1"),
        ("assistant", [{"type": "tool_use", "id": "t1", "name": "B", "input": {}}], "msg_1"),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "1"}], ""),
        ("assistant", [{"type": "tool_use", "id": "t2", "name": "B", "input": {}}], "msg_1"),
        ("user", [{"type": "tool_result", "tool_use_id": "t2", "content": "2"}], ""),
    ]
    out = n.merge_messages(drafts, CTX)
    assert [m["role"] for m in out] == ["user", "assistant", "user"]
    assert [b.get("id") for b in out[1]["content"]] == [None, "t1", "t2"]
    assert [b["tool_use_id"] for b in out[2]["content"]] == ["t1", "t2"]


def test_different_ids_and_same_roles_still_merge_into_alternation() -> None:
    drafts: list[n.Draft] = [
        ("user", [text("a")], ""),
        ("user", [text("b")], ""),
        ("assistant", [text("x")], "msg_1"),
        ("assistant", [text("y")], "msg_2"),
    ]
    out = n.merge_messages(drafts, CTX)
    assert out == [
        {"role": "user", "content": [text("a"), text("b")]},
        {"role": "assistant", "content": [text("x"), text("y")]},
    ]


# -- tool_results_first / drop_empty_text -----------------------------------------------


def test_tool_results_move_first_stably() -> None:
    r1 = {"type": "tool_result", "tool_use_id": "1", "content": "x"}
    r2 = {"type": "tool_result", "tool_use_id": "2", "content": "y"}
    message = {"role": "user", "content": [text("a"), r1, text("b"), r2]}
    (out,) = n.tool_results_first([message], CTX)  # type: ignore[list-item]
    assert out["content"] == [r1, r2, text("a"), text("b")]
    assert message["content"][0] == text("a")  # input untouched


def test_blank_text_goes_and_empty_messages_with_it() -> None:
    result = {"type": "tool_result", "tool_use_id": "1", "content": [text(" "), text("ok")]}
    messages = [
        {"role": "user", "content": [text(""), text("\n")]},
        {"role": "assistant", "content": [text("fine"), text("  ")]},
        {"role": "user", "content": [result]},
    ]
    out = n.drop_empty_text(messages, CTX)  # type: ignore[arg-type]
    assert out == [
        {"role": "assistant", "content": [text("fine")]},
        {"role": "user", "content": [{**result, "content": [text("ok")]}]},
    ]


# -- strip_thinking / drop_trailing_thinking --------------------------------------------


def _thinking(sig: str = "sig") -> dict[str, Any]:
    return {"type": "thinking", "thinking": "t", "signature": sig}


def test_thinking_off_strips_all_thinking() -> None:
    messages = [
        {
            "role": "assistant",
            "content": [_thinking(), {"type": "redacted_thinking", "data": "d"}, text("a")],
        }
    ]
    assert n.strip_thinking(messages, CTX) == [{"role": "assistant", "content": [text("a")]}]  # type: ignore[arg-type]


def test_thinking_on_sends_a_responses_thinking_whole_or_not_at_all() -> None:
    """Unsigned or trailing thinking takes the message's other thinking blocks with it:
    the API rejects a partially dropped sequence (issue 25.12)."""
    messages = [
        {"role": "assistant", "content": [_thinking(), _thinking(""), text("a")]},
        {"role": "assistant", "content": [_thinking(), text("b"), _thinking()]},
        {"role": "assistant", "content": [_thinking("")]},
        {"role": "assistant", "content": [_thinking(), _thinking(), text("c")]},
    ]
    out = n.strip_thinking(messages, THINK)  # type: ignore[arg-type]
    assert out == [
        {"role": "assistant", "content": [text("a")]},
        {"role": "assistant", "content": [text("b")]},
        {"role": "assistant", "content": [_thinking(), _thinking(), text("c")]},
    ]


def test_trailing_thinking_left_by_pairing_is_dropped() -> None:
    messages = [
        {"role": "user", "content": [text("u")]},
        {"role": "assistant", "content": [_thinking()]},
        {"role": "user", "content": [text("v")]},
    ]
    assert n.drop_trailing_thinking(messages, THINK) == [  # type: ignore[arg-type]
        {"role": "user", "content": [text("u"), text("v")]}
    ]


# -- close_tool_turn_without_thinking ---------------------------------------------------


def _loop(first: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [text("go")]},
        {
            "role": "assistant",
            "content": [
                *first,
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"c": 1}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "out"}],
        },
    ]


def test_unfinished_tool_loop_without_thinking_is_closed_not_rewritten() -> None:
    loop = _loop([text("doing")])
    out = n.close_tool_turn_without_thinking(loop, THINK)  # type: ignore[arg-type]
    assert out[:3] == loop  # every tool_use and tool_result kept as it was
    assert out[3:] == [
        {"role": "assistant", "content": [text(n.TOOL_LOOP_CLOSED_TEXT)]},
        {"role": "user", "content": [text(n.CONTINUE_TEXT)]},
    ]
    # The user's own words after the results follow the closing message.
    loop[-1] = {"role": "user", "content": [*loop[-1]["content"], text("and then?")]}
    out = n.close_tool_turn_without_thinking(loop, THINK)  # type: ignore[arg-type]
    assert out[2]["content"] == [{"type": "tool_result", "tool_use_id": "t1", "content": "out"}]
    assert out[3:] == [
        {"role": "assistant", "content": [text(n.TOOL_LOOP_CLOSED_TEXT)]},
        {"role": "user", "content": [text("and then?")]},
    ]


def test_adaptive_thinking_leaves_an_unfinished_loop_open() -> None:
    adaptive = NormalizeContext(tool_names=frozenset({"Bash"}), thinking=ThinkingType.ADAPTIVE)
    loop = _loop([text("doing")])
    assert n.close_tool_turn_without_thinking(loop, adaptive) == loop  # type: ignore[arg-type]


def test_tool_loop_with_thinking_or_thinking_off_is_left_alone() -> None:
    with_thinking = _loop([_thinking()])
    assert n.close_tool_turn_without_thinking(with_thinking, THINK) == with_thinking  # type: ignore[arg-type]
    without = _loop([])
    assert n.close_tool_turn_without_thinking(without, CTX) == without  # type: ignore[arg-type]


# -- ensure_alternation ------------------------------------------------------------------


def test_leading_assistant_gets_a_placeholder_user() -> None:
    out = n.ensure_alternation(
        [{"role": "assistant", "content": [text("hi")]}, {"role": "user", "content": [text("u")]}],
        CTX,
    )
    assert out[0] == {"role": "user", "content": [text(n.LEADING_PLACEHOLDER_TEXT)]}


def test_final_assistant_loses_trailing_whitespace() -> None:
    messages = [
        {"role": "user", "content": [text("u")]},
        {"role": "assistant", "content": [text("Sure. "), text("\n")]},
    ]
    out = n.ensure_alternation(messages, CTX)  # type: ignore[arg-type]
    assert out[-1] == {"role": "assistant", "content": [text("Sure.")]}


def test_with_thinking_on_a_final_assistant_is_followed_by_a_user_turn() -> None:
    messages = [
        {"role": "user", "content": [text("u")]},
        {"role": "assistant", "content": [text("done")]},
    ]
    out = n.ensure_alternation(messages, THINK)  # type: ignore[arg-type]
    assert out[-1] == {"role": "user", "content": [text(n.CONTINUE_TEXT)]}


# -- the whole pipeline ------------------------------------------------------------------


def test_interrupted_turn_normalizes_to_a_valid_request() -> None:
    history: list[Message] = [
        user("run the tests"),
        AssistantMessage(content=(ThinkingBlock(thinking="partial"),), message_id="m1"),
        AssistantMessage(content=(use("t1"),), message_id="m1"),
        user("[Request interrupted by user]"),
    ]
    out = normalize_messages_for_api(history, TOOLS, thinking_enabled=False)
    assert out[1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
    }
    assert out[2]["content"][0]["is_error"] is True
    assert out[2]["content"][1] == text("[Request interrupted by user]")
    assert (
        validate_api_request({"model": "m", "max_tokens": 5, "messages": out, "tools": TOOLS}) == []
    )


def test_file_attachment_requests_are_byte_identical_across_turns() -> None:
    att = attachment_message("file", path="a.py", content="x = 1")
    turn1: list[Message] = [user("look"), att]
    turn2: list[Message] = [*turn1, assistant(TextBlock(text="ok")), user("more")]
    first = normalize_messages_for_api(turn1, TOOLS, thinking_enabled=False)
    second = normalize_messages_for_api(turn2, TOOLS, thinking_enabled=False)
    assert second[: len(first) - 1] == first[:-1]
    assert second[len(first) - 1]["content"][: len(first[-1]["content"])] == first[-1]["content"]


def test_input_is_not_modified_and_output_is_fresh() -> None:
    history: list[Message] = [
        user("a"),
        assistant(use("t1")),
        results("t1"),
        AttachmentMessage(attachment=attachment_message("text", content="c").attachment),
    ]
    snapshot = list(history)
    out1 = normalize_messages_for_api(history, TOOLS)
    out1[0]["content"].append(text("mutated"))
    assert history == snapshot
    assert normalize_messages_for_api(history, TOOLS) != out1


def test_check_invariants_logs_violations_only_at_debug(caplog: Any) -> None:
    broken = [{"role": "user", "content": [text(" ")]}]
    with caplog.at_level("INFO", logger="queryloop.messages.normalize"):
        assert n.check_invariants(broken, CTX) == broken  # type: ignore[arg-type]
    assert caplog.records == []
    with caplog.at_level("DEBUG", logger="queryloop.messages.normalize"):
        n.check_invariants(broken, CTX)  # type: ignore[arg-type]
    assert any("text.empty" in r.getMessage() for r in caplog.records)


def test_garbage_collector_state_is_restored() -> None:
    import gc

    assert gc.isenabled()
    normalize_messages_for_api([user("a")], TOOLS)
    assert gc.isenabled()
    gc.disable()
    try:
        normalize_messages_for_api([user("a")], TOOLS)
        assert not gc.isenabled()
    finally:
        gc.enable()
