"""Tool-result budget: big results go to a file and leave a useful preview."""

from __future__ import annotations

from pathlib import Path

from compact_testkit import assert_valid, history, tool_round

from queryloop.compact import apply_tool_result_budget
from queryloop.compact.budget import result_text
from queryloop.messages import (
    AssistantMessage,
    Message,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    tool_result_message,
    user_message,
)


def _results(messages: list[Message]) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in messages:
        if isinstance(m, UserMessage) and not isinstance(m.content, str):
            for b in m.content:
                if isinstance(b, ToolResultBlock):
                    out[b.tool_use_id] = result_text(b)
    return out


def _big(n: int) -> str:
    return "BEGIN-MARKER " + "".join(f"line {i}\n" for i in range(n)) + " END-MARKER"


def test_oversized_result_is_spilled_with_head_tail_size_and_path(tmp_path: Path) -> None:
    big = _big(40_000)
    msgs = [user_message("go"), *tool_round(1, tool="Bash", result=big)]
    out = apply_tool_result_budget(msgs, session_dir=tmp_path, per_tool_max_chars={"Bash": 30_000})
    assert out.replaced == 1
    preview = _results(out.messages)["toolu_0001"]
    saved = tmp_path / "tool-results" / "toolu_0001.txt"
    assert saved.read_text() == big
    assert str(saved) in preview and "Read" in preview
    assert "BEGIN-MARKER" in preview and "END-MARKER" in preview  # a preview, not a bare notice
    assert f"{len(big):,}" in preview
    assert len(preview) < 4_000
    assert_valid(out.messages)


def test_small_results_and_tool_use_ids_are_untouched(tmp_path: Path) -> None:
    msgs = history(3)
    out = apply_tool_result_budget(msgs, session_dir=tmp_path, per_tool_max_chars={})
    assert out.replaced == 0 and out.messages == msgs
    assert not (tmp_path / "tool-results").exists()


def test_idempotent_and_bytes_stable_across_calls(tmp_path: Path) -> None:
    cache: dict[str, str | None] = {}
    msgs = [user_message("go"), *tool_round(1, result=_big(20_000))]
    kw = {"session_dir": tmp_path, "per_tool_max_chars": {}, "default_max_chars": 10_000}
    first = apply_tool_result_budget(msgs, cache=cache, **kw)  # type: ignore[arg-type]
    again = apply_tool_result_budget(first.messages, cache=cache, **kw)  # type: ignore[arg-type]
    assert again.replaced == 0
    assert _results(again.messages) == _results(first.messages)
    # Without the cache, an already-spilled result is recognised and not re-spilled.
    fresh = apply_tool_result_budget(first.messages, **kw)  # type: ignore[arg-type]
    assert fresh.replaced == 0 and _results(fresh.messages) == _results(first.messages)
    # Original messages replayed with the cache give the same bytes again.
    replay = apply_tool_result_budget(msgs, cache=cache, **kw)  # type: ignore[arg-type]
    assert _results(replay.messages) == _results(first.messages)


def test_aggregate_budget_per_turn_spills_largest_first(tmp_path: Path) -> None:
    uses = tuple(ToolUseBlock(id=f"t{i}", name="Grep", input={}) for i in range(3))
    sizes = {"t0": 30_000, "t1": 90_000, "t2": 60_000}
    msgs: list[Message] = [user_message("go"), AssistantMessage(content=uses)]
    # The three results are separate internal messages that normalize into one API message.
    msgs += [tool_result_message(i, "r" * n) for i, n in sizes.items()]
    out = apply_tool_result_budget(
        msgs,
        session_dir=tmp_path,
        per_tool_max_chars={},
        default_max_chars=100_000,
        per_message_max_chars=100_000,
    )
    texts = _results(out.messages)
    assert out.replaced == 1
    assert texts["t1"].startswith("<persisted-output>")  # the largest went first
    assert texts["t0"] == "r" * 30_000 and texts["t2"] == "r" * 60_000
    assert_valid(out.messages)


def test_without_session_dir_the_preview_says_it_was_not_saved() -> None:
    msgs = [user_message("go"), *tool_round(1, result=_big(20_000))]
    out = apply_tool_result_budget(
        msgs, session_dir=None, per_tool_max_chars={}, default_max_chars=1_000
    )
    preview = _results(out.messages)["toolu_0001"]
    assert "could not be saved" in preview and "BEGIN-MARKER" in preview


def test_unwritable_session_dir_still_gives_a_preview(tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    msgs = [user_message("go"), *tool_round(1, result=_big(20_000))]
    out = apply_tool_result_budget(
        msgs, session_dir=blocker, per_tool_max_chars={}, default_max_chars=1_000
    )
    preview = _results(out.messages)["toolu_0001"]
    assert "could not be saved" in preview and "BEGIN-MARKER" in preview
