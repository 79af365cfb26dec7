"""ensure_tool_result_pairing: each repair, purity and idempotence on concrete cases."""

from __future__ import annotations

from typing import Any

from queryloop.messages import ensure_tool_result_pairing
from queryloop.messages.interruption import Interruption

INTERRUPTED_TOOL_RESULT = Interruption.UNPAIRED.text()


def use(tid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": "Bash", "input": {}}


def res(tid: str, content: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def u(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def a(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def pair(*messages: dict[str, Any]) -> list[dict[str, Any]]:
    out: Any = ensure_tool_result_pairing(list(messages))  # type: ignore[arg-type]
    assert ensure_tool_result_pairing(out) == out  # idempotent
    return list(out)


def synthetic(tid: str) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": tid,
        "content": INTERRUPTED_TOOL_RESULT,
        "is_error": True,
    }


def test_valid_array_is_unchanged() -> None:
    messages = [u(text("go")), a(use("t1"), use("t2")), u(res("t1"), res("t2"), text("more"))]
    assert pair(*messages) == messages


def test_orphan_tool_use_gets_a_synthetic_error_result() -> None:
    assert pair(u(text("go")), a(use("t1")), u(text("stop"))) == [
        u(text("go")),
        a(use("t1")),
        u(synthetic("t1"), text("stop")),
    ]


def test_orphan_tool_use_at_the_end_gets_a_new_user_message() -> None:
    assert pair(u(text("go")), a(text("x"), use("t1"))) == [
        u(text("go")),
        a(text("x"), use("t1")),
        u(synthetic("t1")),
    ]


def test_orphan_tool_use_before_an_assistant_gets_a_user_message_between() -> None:
    out = pair(u(text("go")), a(use("t1")), a(text("after")))
    assert out == [u(text("go")), a(use("t1")), u(synthetic("t1")), a(text("after"))]


def test_orphan_tool_result_is_removed_with_its_empty_message() -> None:
    out = pair(u(text("go")), a(text("hi")), u(res("ghost")), a(text("again")))
    assert out == [u(text("go")), a(text("hi"), text("again"))]


def test_orphan_tool_result_keeps_the_rest_of_its_message() -> None:
    assert pair(u(res("ghost"), text("hello"))) == [u(text("hello"))]


def test_duplicate_tool_use_is_removed_with_its_result() -> None:
    out = pair(
        u(text("go")),
        a(use("t1")),
        u(res("t1", "first")),
        a(text("again"), use("t1")),
        u(res("t1", "second"), text("note")),
    )
    assert out == [
        u(text("go")),
        a(use("t1")),
        u(res("t1", "first")),
        a(text("again")),
        u(text("note")),
    ]


def test_duplicate_within_one_message_keeps_the_first() -> None:
    assert pair(u(text("go")), a(use("t1"), use("t1")), u(res("t1"))) == [
        u(text("go")),
        a(use("t1")),
        u(res("t1")),
    ]


def test_late_tool_result_moves_next_to_its_tool_use() -> None:
    out = pair(u(text("go")), a(use("t1")), u(text("wait")), a(text("hm")), u(res("t1", "late")))
    assert out == [u(text("go")), a(use("t1")), u(res("t1", "late"), text("wait")), a(text("hm"))]


def test_results_come_first_in_tool_use_order() -> None:
    out = pair(u(text("go")), a(use("t1"), use("t2")), u(text("x"), res("t2"), res("t1")))
    assert out[2] == u(res("t1"), res("t2"), text("x"))


def test_input_is_not_modified() -> None:
    messages = [u(text("go")), a(use("t1")), u(text("x"), res("t1")), u(text("y"))]
    before = repr(messages)
    pair(*messages)
    assert repr(messages) == before
