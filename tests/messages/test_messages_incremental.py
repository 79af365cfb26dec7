"""IncrementalNormalizer: byte-for-byte the full normalization, at O(new messages) cost."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msg_strategies import TOOLS, event, internal_arrays
from session_strategies import examples

from queryloop.messages import (
    AssistantMessage,
    Attachment,
    AttachmentMessage,
    Message,
    TextBlock,
    ThinkingType,
    TombstoneMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    normalize_messages_for_api,
)
from queryloop.messages.incremental import IncrementalNormalizer

THINKING_CHOICES = [ThinkingType.DISABLED] * 3 + [ThinkingType.ADAPTIVE, ThinkingType.ENABLED]


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=False, ensure_ascii=False)


def loop_step(index: int, mid: str = "", attach: bool = True) -> list[Message]:
    """What one query-loop iteration appends: a tool call, its result, an attachment."""
    tid = f"toolu_loop_{index}"
    out: list[Message] = [
        AssistantMessage(
            content=(TextBlock(text=f"step {index}"), ToolUseBlock(id=tid, name="Bash")),
            message_id=mid or f"msg_loop_{index}",
            uuid=f"loop{index}",
            timestamp="t",
        ),
        UserMessage(
            content=(ToolResultBlock(tool_use_id=tid, content=f"out {index}"),),
            uuid=f"loopr{index}",
            timestamp="t",
        ),
    ]
    if attach:
        out.append(
            AttachmentMessage(
                attachment=Attachment("text", {"content": f"note {index}"}),
                uuid=f"loopa{index}",
                timestamp="t",
            )
        )
    return out


@st.composite
def sessions(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """A sequence of operations on a growing array: appends of arbitrary events or loop
    steps, and compaction-like replacements (a suffix kept, a message swapped for a copy)."""
    ops: list[tuple[str, Any]] = []
    index = 100
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["loop", "loop", "loop", "event", "replace", "tombstone"]))
        if kind == "loop":
            shared = draw(st.sampled_from(["", "", "msg_a", "msg_loop_101"]))
            ops.append(("append", loop_step(index, shared, draw(st.booleans()))))
        elif kind == "event":
            ops.append(("append", draw(event(index))))
        elif kind == "tombstone":
            target = f"loop{draw(st.integers(100, index))}"
            ops.append(("append", [TombstoneMessage(target_uuid=target, uuid=f"t{index}")]))
        else:
            ops.append(("replace", draw(st.integers(0, 6))))
        ops.append(("thinking", draw(st.sampled_from(THINKING_CHOICES))))
        ops.append(("prefill", draw(st.booleans())))
        index += 1
    return ops


def _apply(current: list[Message], op: tuple[str, Any]) -> list[Message]:
    kind, arg = op
    if kind == "append":
        return [*current, *arg]
    if kind == "replace" and current:
        if arg % 2:
            return current[arg % len(current) :]  # compaction keeps a suffix
        position = arg % len(current)
        copy = list(current)
        message = copy[position]
        copy[position] = type(message)(**{s: getattr(message, s) for s in _fields(message)})
        return copy
    return current


def _fields(message: Message) -> list[str]:
    import dataclasses

    return [f.name for f in dataclasses.fields(message)]


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(internal_arrays(), sessions())
def test_incremental_equals_full_normalization(start: list[Message], ops: list[Any]) -> None:
    normalizer = IncrementalNormalizer()
    current = list(start)
    earlier: list[tuple[list[Any], str]] = []
    thinking = ThinkingType.DISABLED
    prefill = True
    for op in ops:
        if op[0] == "thinking":
            thinking = op[1]
        elif op[0] == "prefill":
            prefill = op[1]
        else:
            current = _apply(current, op)
        got = normalizer.normalize(current, TOOLS, thinking=thinking, prefill=prefill)
        want = normalize_messages_for_api(current, TOOLS, thinking=thinking, prefill=prefill)
        assert _dump(got) == _dump(want)
        earlier.append((got, _dump(got)))
    # Later calls never modify what earlier calls returned (the prefix dicts are shared).
    for value, text in earlier:
        assert _dump(value) == text


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(internal_arrays(), st.lists(st.booleans(), min_size=1, max_size=10))
def test_incremental_equals_full_on_plain_loop_appends(
    start: list[Message], tools: list[bool]
) -> None:
    normalizer = IncrementalNormalizer()
    if len(tools) % 2:
        # Tombstones force full runs; without them the incremental path does the work.
        start = [m for m in start if not isinstance(m, TombstoneMessage)]
    current = [UserMessage(content="go", uuid="go", timestamp="t"), *start]
    for index, with_tools in enumerate(tools):
        current = [*current, *loop_step(200 + index)]
        names = TOOLS if with_tools else TOOLS[1:]
        got = normalizer.normalize(current, names, thinking_enabled=False)
        want = normalize_messages_for_api(current, names, thinking_enabled=False)
        assert _dump(got) == _dump(want)


@pytest.mark.parametrize("thinking", [ThinkingType.DISABLED, ThinkingType.ADAPTIVE])
def test_loop_appends_normalize_only_the_new_messages(thinking: ThinkingType) -> None:
    """Also with adaptive thinking, the default of the newest models (issue 25.14)."""
    normalizer = IncrementalNormalizer()
    current: list[Message] = [UserMessage(content="go", uuid="go", timestamp="t")]
    for index in range(400):
        current = [*current, *loop_step(index)]
    normalizer.normalize(current, TOOLS, thinking=thinking)
    before = normalizer.messages_normalized
    for index in range(400, 420):
        current = [*current, *loop_step(index)]
        got = normalizer.normalize(current, TOOLS, thinking=thinking)
        assert got == normalize_messages_for_api(current, TOOLS, thinking=thinking)
    # 20 iterations over a 1200-message history: each normalizes a few recent messages.
    assert normalizer.full_runs == 0
    assert normalizer.messages_normalized - before <= 20 * 12


def test_extended_thinking_and_replacements_fall_back_to_full_runs() -> None:
    normalizer = IncrementalNormalizer()
    current: list[Message] = [UserMessage(content="go", uuid="go", timestamp="t")]
    for index in range(5):
        current = [*current, *loop_step(index)]
    normalizer.normalize(current, TOOLS, thinking_enabled=True)
    assert normalizer.full_runs == 1
    normalizer.normalize(current, TOOLS, thinking_enabled=False)
    compacted = current[3:]
    got = normalizer.normalize(compacted, TOOLS, thinking_enabled=False)
    assert got == normalize_messages_for_api(compacted, TOOLS, thinking_enabled=False)
    voided = [*current, TombstoneMessage(target_uuid="loop1", uuid="tomb")]
    got = normalizer.normalize(voided, TOOLS, thinking_enabled=False)
    assert got == normalize_messages_for_api(voided, TOOLS, thinking_enabled=False)
    assert normalizer.full_runs == 2


def test_leading_attachment_then_assistant_then_user_stays_equal() -> None:
    """Regression (found by the property test): an array that opens with an attachment and
    an assistant message has no opening user message, in the full run as in the tail."""
    from queryloop.messages import ThinkingBlock

    start: list[Message] = [
        AttachmentMessage(
            attachment=Attachment("directory", {"path": "/src", "listing": "a.py\nb.py"}),
            uuid="m0",
            timestamp="t",
        ),
        AssistantMessage(
            content=(ThinkingBlock(thinking="partial"), ToolUseBlock(id="toolu_0", name="Bash")),
            uuid="m1",
            timestamp="t",
        ),
        UserMessage(content="[Request interrupted by user]", uuid="m1_i", timestamp="t"),
    ]
    later = [
        *start,
        AttachmentMessage(
            attachment=Attachment("file", {"path": "/src/app.py", "content": ""}),
            uuid="m100",
            timestamp="t",
        ),
    ]
    normalizer = IncrementalNormalizer()
    for messages in (start, later):
        got = normalizer.normalize(messages, TOOLS, thinking_enabled=False)
        want = normalize_messages_for_api(messages, TOOLS, thinking_enabled=False)
        assert _dump(got) == _dump(want)
