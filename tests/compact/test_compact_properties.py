"""Property: for ANY well-formed history, every stage's output needs no pairing repair and
normalizes into a request that breaks no API rule."""

from __future__ import annotations

import asyncio
from typing import Any

from compact_testkit import FakeSummarizer, assert_valid
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from queryloop.compact import (
    CollapseStore,
    RestoreContext,
    apply_tool_result_budget,
    compact_conversation,
    estimate_tokens,
    microcompact,
    snip_history,
    truncate_head_for_ptl_retry,
)
from queryloop.messages import (
    AssistantMessage,
    Message,
    ProgressMessage,
    SystemMessage,
    SystemSubtype,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    attachment_message,
    tool_result_message,
    user_message,
)

TOOL_NAMES = ["Read", "Bash", "Edit", "Grep"]


@st.composite
def histories(draw: Any) -> list[Message]:
    """A first user message, then rounds: one response (maybe split over two messages
    sharing an id) with 0-3 tool calls, results in one or several user messages, and
    noise (attachments, progress, system events, user text) between rounds."""
    out: list[Message] = [user_message("Task: keep FACT-123 in mind.")]
    counter = 0
    for r in range(draw(st.integers(1, 14))):
        n_tools = draw(st.integers(0, 3))
        uses = []
        for _ in range(n_tools):
            counter += 1
            uses.append(ToolUseBlock(id=f"t{counter}", name=draw(st.sampled_from(TOOL_NAMES))))
        text = TextBlock(text=f"round {r} " + "w" * draw(st.integers(0, 800)))
        if uses and draw(st.booleans()):
            out.append(AssistantMessage(content=(text,), message_id=f"m{r}"))
            out.append(AssistantMessage(content=tuple(uses), message_id=f"m{r}"))
        else:
            out.append(AssistantMessage(content=(text, *uses), message_id=f"m{r}"))
        sizes = [draw(st.integers(0, 3_000)) for _ in uses]
        if uses and draw(st.booleans()):
            blocks = tuple(
                ToolResultBlock(tool_use_id=u.id, content="r" * s)
                for u, s in zip(uses, sizes, strict=True)
            )
            out.append(UserMessage(content=blocks))
        else:
            out += [tool_result_message(u.id, "r" * s) for u, s in zip(uses, sizes, strict=True)]
        noise = draw(st.sampled_from(["none", "attachment", "progress", "system", "user"]))
        if noise == "attachment":
            out.append(attachment_message("text", content="reminder"))
        elif noise == "progress" and uses:
            out.append(ProgressMessage(tool_use_id=uses[0].id))
        elif noise == "system":
            out.append(SystemMessage(subtype=SystemSubtype.INFORMATIONAL, content="note"))
        elif noise == "user" or not uses:
            out.append(user_message(f"user says {r}"))
    return out


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(histories(), st.integers(0, 6_000))
def test_snip_collapse_truncate_outputs_are_valid(msgs: list[Message], tokens: int) -> None:
    assert_valid(msgs)  # the generator itself makes valid histories
    assert_valid(snip_history(msgs, enabled=True, keep_head=1, keep_tail_tokens=tokens).messages)
    store = CollapseStore(keep_recent_rounds=1)
    store.stage(msgs, max(0, estimate_tokens(msgs) - tokens))
    store.drain()
    assert_valid(store.project(msgs))
    cut = truncate_head_for_ptl_retry(msgs, tokens)
    if cut is not None:
        assert_valid(cut)
        assert cut[0] is msgs[0]


@SETTINGS
@given(histories(), st.integers(0, 4))
def test_budget_and_microcompact_outputs_are_valid(msgs: list[Message], keep: int) -> None:
    budget = apply_tool_result_budget(
        msgs, session_dir=None, per_tool_max_chars={"Bash": 500}, per_message_max_chars=2_000
    )
    assert_valid(budget.messages)
    cleared = microcompact(budget.messages, now=1e9, last_assistant_time=0.0, keep_recent=keep)
    assert_valid(cleared.messages)


@SETTINGS
@given(histories(), st.integers(0, 3_000))
def test_compacted_history_is_valid_and_keeps_the_task(msgs: list[Message], tail: int) -> None:
    result = asyncio.run(
        compact_conversation(
            msgs,
            summarize=FakeSummarizer(),
            trigger="auto",
            custom_instructions=None,
            restore=RestoreContext(keep_tail_tokens=tail, read_files=lambda paths: {}),
        )
    )
    assert_valid(result.messages)
    assert "FACT-123" in repr(result.messages)
